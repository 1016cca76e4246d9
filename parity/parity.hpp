// Parity traces: one training step recorded tensor by tensor, to find where a C++ run and its
// PyTorch twin part ways.
//
// A trace holds every tensor of one step in the order the step made it: the batch, the parameters,
// every module's output (what forward hooks collect in PyTorch), the loss, the gradients, the
// parameters after the optimizer's step. The PyTorch twin (tools/reference/parity_reference.py)
// writes the same names in the same order; compare_traces names the first tensor that differs
// beyond a tolerance, where the difference starts. Traces travel as safetensors files.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "nn/module.hpp"

namespace minigrad::parity {

/// (name, tensor) in the order a training step made them.
using Trace = nn::NamedTensors;

/// Runs one training step of `model` and records it. The names, which the PyTorch twin uses too:
///   "input", "target"                the batch
///   "net.0.weight", ...              every parameter before the step (named_parameters() order)
///   "net.0.output", ..., "output"    every module's output in the order the calls return, inner
///                                    modules first; "output" is the model's own ("#2" is added
///                                    to the name of a module's second call, and so on)
///   "loss"                           loss_fn(output, target)
///   "net.0.weight.grad", ...         every parameter's gradient (a parameter the loss does not
///                                    reach has none and is left out)
///   "net.0.weight.updated", ...      every parameter after `step`
/// In between it calls model.zero_grad(), the forward, loss_fn, backward, then `step`
/// (`[&] { optimizer.step(); }`). Every tensor is a copy, so training on does not change the trace.
Trace trace_training_step(nn::Module& model, const Tensor& input, const Tensor& target,
                          const std::function<Tensor(const Tensor& output, const Tensor& target)>& loss_fn,
                          const std::function<void()>& step);

/// Saves a trace as a safetensors file (io/safetensors.hpp) whose metadata "trace_order" lists the
/// names in order, separated by commas. Throws std::invalid_argument for a name holding a comma,
/// otherwise as save_file.
void save_trace(const Trace& trace, const std::string& path);
/// Reads a trace written by save_trace or the PyTorch twin, in its recorded order (the file's own
/// order if it has no "trace_order"). Throws std::runtime_error as load_file, and when
/// "trace_order" does not list each tensor of the file exactly once.
Trace load_trace(const std::string& path);

/// When two elements agree: |ours - reference| <= atol + rtol * |reference| (torch.allclose's
/// rule, at tolerances that float32 BLAS differences stay well inside); nan agrees with nan.
struct ParityOptions {
  double atol = 1e-5;  ///< absolute tolerance
  double rtol = 1e-4;  ///< relative tolerance, times |reference|
};

/// One tensor of our trace checked against the reference.
struct TensorParity {
  std::string name;         ///< its name in the trace
  bool agrees = false;      ///< every element within tolerance
  double max_abs_diff = 0;  ///< largest |ours - reference|; inf for a nan against a number, a
                            ///< missing tensor or another shape
  std::string problem;      ///< "" when it agrees: "values differ", "missing in the reference",
                            ///< "shape [2, 3] here, [3, 2] in the reference"
};

/// The result of compare_traces: every tensor in our order.
struct ParityReport {
  std::vector<TensorParity> tensors;  ///< one per tensor of our trace, in its order
  /// The first tensor that does not agree, or nullptr when all do.
  const TensorParity* first_divergence() const;
  /// True when every tensor agrees.
  bool agrees() const { return first_divergence() == nullptr; }
};

/// Checks each tensor of `ours` against the reference tensor of the same name, in our order.
/// Tensors only the reference has are ignored. Throws std::invalid_argument for a negative tolerance.
ParityReport compare_traces(const Trace& ours, const Trace& reference, ParityOptions options = {});

/// One line per tensor (name, max abs diff, verdict), then the conclusion:
/// "first divergence: net.1.output (values differ, max abs diff 0.0123)" or "all 20 tensors agree".
std::string to_string(const ParityReport& report);

}  // namespace minigrad::parity
