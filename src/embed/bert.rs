//! A sentence-transformers BERT model read from a directory (all-MiniLM-L6-v2 as `gavel models
//! fetch` puts it there): `model.safetensors`, `config.json`, `tokenizer.json`; run on the CPU
//! with candle, attention-masked mean pooling, L2-normalized, as sentence-transformers does.

use std::path::Path;

use candle_core::{DType, Device, Tensor};
use candle_nn::VarBuilder;
use candle_transformers::models::bert::{BertModel, Config};

/// The files a model directory must hold.
pub(crate) const FILES: [&str; 3] = ["model.safetensors", "config.json", "tokenizer.json"];

/// The window all-MiniLM-L6-v2 was trained with (its `max_seq_length`), special tokens included.
const MAX_SEQ_LENGTH: usize = 256;

pub(crate) struct Bert {
    model: BertModel,
    /// Tokens per input, special tokens included.
    pub window: usize,
    /// The length of its vectors.
    pub dimensions: usize,
}

impl Bert {
    /// Loads the weights and configuration of `dir`; the error names the file that failed.
    pub(super) fn load(dir: &Path) -> Result<Bert, String> {
        let read = |name: &str| {
            let path = dir.join(name);
            std::fs::read(&path).map_err(|e| format!("cannot read {}: {e}", path.display()))
        };
        let config: Config = serde_json::from_slice(&read("config.json")?)
            .map_err(|e| format!("{}: {e}", dir.join("config.json").display()))?;
        let weights = VarBuilder::from_buffered_safetensors(
            read("model.safetensors")?,
            DType::F32,
            &Device::Cpu,
        )
        .map_err(|e| format!("{}: {e}", dir.join("model.safetensors").display()))?;
        let model = BertModel::load(weights, &config)
            .map_err(|e| format!("{}: {e}", dir.join("model.safetensors").display()))?;
        Ok(Bert {
            window: MAX_SEQ_LENGTH.min(config.max_position_embeddings),
            dimensions: config.hidden_size,
            model,
        })
    }

    /// The unit vector of one tokenized input (at most `window` ids).
    pub(super) fn embed(&self, ids: &[u32]) -> candle_core::Result<Vec<f32>> {
        let mask = vec![1u32; ids.len()];
        let types = vec![0u32; ids.len()];
        let ids = Tensor::new(ids, &Device::Cpu)?.unsqueeze(0)?;
        let types = Tensor::new(types.as_slice(), &Device::Cpu)?.unsqueeze(0)?;
        let mask = Tensor::new(mask.as_slice(), &Device::Cpu)?.unsqueeze(0)?;
        let hidden = self.model.forward(&ids, &types, Some(&mask))?;
        // Every token is real (no padding): the masked mean is the plain mean.
        hidden.mean(1)?.squeeze(0)?.to_vec1::<f32>()
    }
}
