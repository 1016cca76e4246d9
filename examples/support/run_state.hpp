// What the language-model examples (bigram, gpt) keep of a long run: the losses so far, the
// picture of them, and a checkpoint to continue from.
//
// Not part of minigrad. A checkpoint is one safetensors file holding everything a run needs to go
// on as if it had never stopped: the model ("model.<name>"), the optimizer ("optimizer.<key>"),
// the default generator's state ("rng_state"), the loss history ("history.*") and, as metadata,
// the step and the run's configuration. One file written atomically (save_file writes a
// temporary file and renames it), so a crash or a full disk mid-save leaves the previous
// checkpoint whole. Its text, CSV and pictures are written the same way (support/text_file.hpp).
#pragma once

#include <cstdint>
#include <cstdio>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

#include "autograd/random.hpp"
#include "autograd/tensor.hpp"
#include "data/text.hpp"
#include "examples/support/checkpoint_step.hpp"
#include "examples/support/plot.hpp"
#include "io/safetensors.hpp"
#include "nn/module.hpp"
#include "optim/optimizer.hpp"

namespace support {

/// The course's text at `path` (data::read_text), or an error saying where the file comes from.
inline std::string read_course_text(const std::string& path) {
  try {
    return minigrad::data::read_text(path);
  } catch (const std::runtime_error& error) {
    throw std::runtime_error(std::string(error.what()) +
                             " (the course's text is tiny Shakespeare, assets/tinyshakespeare.txt in the "
                             "repository, see assets/README.md; give another file with --input)");
  }
}

/// Throws std::invalid_argument unless a window of block_size tokens and its next token fit in
/// the smaller split, the validation data of val_tokens tokens (get_batch's randint needs it).
inline void check_block_size(int64_t block_size, int64_t val_tokens) {
  if (block_size >= val_tokens) {
    throw std::invalid_argument(
        "--block-size " + std::to_string(block_size) + " is too large: the validation split holds only " +
        std::to_string(val_tokens) + " tokens, and a batch needs block_size + 1 of them");
  }
}

/// The losses of a run: every training batch's, and each evaluation's train and val loss.
struct RunHistory {
  std::vector<double> steps;   ///< 1, 2, 3, ...: the step whose batch gave losses[i]
  std::vector<double> losses;  ///< the training batch's loss
  std::vector<double> eval_steps;
  std::vector<double> eval_train;
  std::vector<double> eval_val;
};

namespace detail {

inline minigrad::Tensor column(const std::vector<double>& values) {
  return minigrad::tensor(values, {static_cast<int64_t>(values.size())}, {.dtype = minigrad::kFloat64});
}

inline std::vector<double> column_of(const minigrad::nn::NamedTensors& tensors, const std::string& name,
                                     const std::string& path) {
  for (const auto& [key, value] : tensors) {
    if (key == name) return value.to_vector<double>();
  }
  throw std::runtime_error(path + " is not a checkpoint of this program: it has no tensor '" + name + "'");
}

}  // namespace detail

/// Saves model, optimizer, the default generator's state, `history` and `step` to `path`,
/// with `config` (the run's flags) as metadata. Atomic: `path` keeps its previous content on any
/// error. Throws std::runtime_error naming the path and the reason (missing or unwritable folder,
/// disk full).
inline void save_checkpoint(const std::string& path, const minigrad::nn::Module& model,
                            const minigrad::optim::Optimizer& optimizer, int64_t step,
                            const RunHistory& history, const minigrad::Metadata& config) {
  minigrad::nn::NamedTensors tensors;
  for (const auto& [name, value] : model.state_dict()) tensors.emplace_back("model." + name, value);
  for (const auto& [name, value] : optimizer.state_dict()) tensors.emplace_back("optimizer." + name, value);
  tensors.emplace_back("rng_state", minigrad::get_rng_state());
  tensors.emplace_back("history.steps", detail::column(history.steps));
  tensors.emplace_back("history.losses", detail::column(history.losses));
  tensors.emplace_back("history.eval_steps", detail::column(history.eval_steps));
  tensors.emplace_back("history.eval_train", detail::column(history.eval_train));
  tensors.emplace_back("history.eval_val", detail::column(history.eval_val));
  minigrad::Metadata metadata = config;
  metadata["step"] = std::to_string(step);
  minigrad::save_file(tensors, path, metadata);
}

/// Loads a checkpoint written by save_checkpoint into model, optimizer, the default generator and
/// `history`; returns its step. Prints a note to stderr for each flag of `config` the checkpoint
/// was written with another value of (the later numbers then differ from an uninterrupted run).
/// Throws std::runtime_error for a file that is missing, truncated, not safetensors or not a
/// checkpoint of this program; std::invalid_argument naming each tensor of another shape (both
/// shapes) or name, for a checkpoint of another model configuration.
inline int64_t load_checkpoint(const std::string& path, minigrad::nn::Module& model,
                               minigrad::optim::Optimizer& optimizer, RunHistory& history,
                               const minigrad::Metadata& config) {
  const minigrad::nn::NamedTensors tensors = minigrad::load_file(path);
  const minigrad::Metadata metadata = minigrad::load_metadata(path);
  const int64_t step = checkpoint_step(metadata, path);  // throws for a missing or malformed one
  minigrad::nn::StateDict model_state;
  std::map<std::string, minigrad::Tensor> optimizer_state;
  minigrad::Tensor rng_state;
  for (const auto& [name, value] : tensors) {
    if (name.starts_with("model.")) model_state.emplace_back(name.substr(6), value);
    if (name.starts_with("optimizer.")) optimizer_state.emplace(name.substr(10), value);
    if (name == "rng_state") rng_state = value;
  }
  if (model_state.empty() || !rng_state.defined()) {
    throw std::runtime_error(path + " is not a checkpoint of this program: it has no model or no rng_state");
  }
  for (const auto& [key, value] : config) {
    const auto found = metadata.find(key);
    if (found != metadata.end() && found->second != value) {
      std::fprintf(stderr, "note: %s was written with --%s %s, this run uses %s\n", path.c_str(), key.c_str(),
                   found->second.c_str(), value.c_str());
    }
  }

  try {
    model.load_state_dict(model_state);
  } catch (const std::invalid_argument& error) {
    // The message lists every tensor that differs; the first three say enough.
    std::string problems = error.what();
    size_t cut = 0;
    int shown = 0;
    while (shown < 3 && (cut = problems.find("; ", cut + 1)) != std::string::npos) ++shown;
    if (cut != std::string::npos) {
      int more = 0;
      for (size_t at = cut; (at = problems.find("; ", at + 1)) != std::string::npos;) ++more;
      problems = problems.substr(0, cut) + "; and " + std::to_string(more + 1) + " more";
    }
    throw std::invalid_argument(path + " holds another model configuration: " + problems);
  }
  optimizer.load_state_dict(optimizer_state);
  minigrad::set_rng_state(rng_state);
  history.steps = detail::column_of(tensors, "history.steps", path);
  history.losses = detail::column_of(tensors, "history.losses", path);
  history.eval_steps = detail::column_of(tensors, "history.eval_steps", path);
  history.eval_train = detail::column_of(tensors, "history.eval_train", path);
  history.eval_val = detail::column_of(tensors, "history.eval_val", path);
  return step;
}

/// The loss curve as an SVG picture: each training batch's loss (faint, it is noisy) and the
/// evaluations' train and val losses (bold) against the step, on a log scale.
inline void write_run_plot(const std::string& path, const std::string& title, const RunHistory& history) {
  LinePlot plot{
      .title = title, .x_title = "step", .y_title = "cross-entropy loss", .log_y = true, .series = {}};
  plot.series.push_back({.label = "training batch",
                         .x = history.steps,
                         .y = history.losses,
                         .color = "#1f77b4",
                         .width = 1,
                         .opacity = 0.35});
  plot.series.push_back({.label = "train (evaluation)",
                         .x = history.eval_steps,
                         .y = history.eval_train,
                         .color = "#2ca02c",
                         .width = 2.5,
                         .opacity = 1});
  plot.series.push_back({.label = "val (evaluation)",
                         .x = history.eval_steps,
                         .y = history.eval_val,
                         .color = "#d62728",
                         .width = 2.5,
                         .opacity = 1});
  write_line_plot(path, plot);
}

}  // namespace support
