#pragma once
// `ember train --model transformer` and `ember generate`: the character-level language model end to end (corpus,
// tokenizer, model, AdamW, record with the tokenizer inside, loss/perplexity curve; sampling with temperature and
// top-k). The CPU runs in the executable, GPU backends in their training plugin (train_plugin.hpp).
#include <cstdint>
#include <filesystem>
#include <ostream>
#include <string>
#include <vector>

#include "tools/ember/lm_model.hpp"

namespace ember::tools {

struct LmTrainOptions {
  std::string backend = "cpu";
  LmConfig model;                  // vocab_size comes from the corpus
  int64_t steps = 1000;            // AdamW steps
  int64_t batch_size = 32;         // windows of context + 1 characters per step
  double lr = 2e-3;
  int64_t log_every = 50;          // a curve point / log line every this many steps
  std::string precision = "full";  // record precision: full | half | double
  std::filesystem::path out;       // default: fortunes-transformer.emr
  std::filesystem::path data;      // a text file or a fortunes directory; default: fortunes-min's files
  uint64_t seed = 42;
  bool progress = true;
};

struct LmPoint {
  int64_t step = 0;
  double train_loss = 0.0;  // mean over the steps since the previous point (nats per character)
  double valid_loss = 0.0;  // on fixed held-out windows (the corpus's last 10%)
  double seconds = 0.0;     // training time since the previous point
};

struct LmTrainResult {
  std::vector<LmPoint> points;
  int64_t vocab_size = 0, corpus_chars = 0;
  std::filesystem::path record_path, curve_path;
};

LmTrainResult run_train_lm(const LmTrainOptions& o, std::ostream& log);

struct GenerateOptions {
  std::filesystem::path record;
  std::string backend = "cpu";
  std::string prompt = "\n";
  double temperature = 0.8;  // > 0; logits are divided by it
  int64_t top_k = 0;         // sample among the k likeliest characters; 0: all
  int64_t length = 300;      // characters generated after the prompt
  uint64_t seed = 1;
};

// The prompt followed by `length` sampled characters.
std::string run_generate(const GenerateOptions& o);

// Record scalars that identify the model and its tokenizer.
inline constexpr const char* kLmVocabPrefix = "ember.lm.vocab.";
inline constexpr double kTransformerModelId = 2.0;  // record scalar "ember.model" (0 mlp, 1 cnn)

}  // namespace ember::tools
