// Parity traces: recording one training step, saving it, and comparing it with PyTorch's.
//
// The step is the usual five lines (zero_grad, forward, loss, backward, step) with a copy of
// every tensor taken between them; module outputs come from an OutputRecorder (nn/module.hpp).
// The comparison walks our trace in order and stops at nothing: the report lists every tensor,
// and first_divergence() picks the earliest one that disagrees.
#include "parity/parity.hpp"

#include <cmath>
#include <cstdio>
#include <limits>
#include <map>
#include <sstream>
#include <stdexcept>

#include "autograd/op_support.hpp"
#include "io/safetensors.hpp"

namespace minigrad::parity {

using minigrad::detail::check;

namespace {

// An independent copy, outside the graph.
Tensor copy_of(const Tensor& t) {
  NoGradGuard no_grad;
  return t.detach().clone();
}

// A module output's trace name: "net.0.output" for path "net.0" below a model at path `base`
// ("" when the model is a root), "output" for the model itself.
std::string output_name(const std::string& path, const std::string& base) {
  std::string relative = path;
  if (!base.empty()) relative = path == base ? "" : path.substr(base.size() + 1);
  return relative.empty() ? "output" : relative + ".output";
}

// The largest |a - b| over elements of equal shape; nan meeting a number counts as inf, and two
// nans (or two equal infinities) as 0. `agrees` is false if any pair is outside the tolerance.
double max_abs_diff(const Tensor& a, const Tensor& b, const ParityOptions& options, bool& agrees) {
  const std::vector<double> x = a.to_vector<double>(), y = b.to_vector<double>();
  double largest = 0;
  agrees = true;
  for (size_t i = 0; i < x.size(); ++i) {
    if (std::isnan(x[i]) && std::isnan(y[i])) continue;
    if (x[i] == y[i]) continue;  // equal numbers, or the same infinity
    const double diff = std::isnan(x[i]) || std::isnan(y[i]) ? std::numeric_limits<double>::infinity()
                                                             : std::abs(x[i] - y[i]);
    largest = std::max(largest, diff);
    if (!(diff <= options.atol + options.rtol * std::abs(y[i]))) agrees = false;
  }
  return largest;
}

}  // namespace

Trace trace_training_step(nn::Module& model, const Tensor& input, const Tensor& target,
                          const std::function<Tensor(const Tensor& output, const Tensor& target)>& loss_fn,
                          const std::function<void()>& step) {
  Trace trace{{"input", copy_of(input)}, {"target", copy_of(target)}};
  const nn::NamedTensors parameters = model.named_parameters();
  for (const auto& [name, parameter] : parameters) trace.emplace_back(name, copy_of(parameter));

  model.zero_grad();
  Tensor loss;
  {
    nn::OutputRecorder recorder;
    const Tensor output = model(input);
    std::map<std::string, int> calls;  // a module called again gets "#2", "#3", ...
    for (const auto& [path, value] : recorder.outputs()) {
      std::string name = output_name(path, model.path());
      const int call = ++calls[name];
      if (call > 1) name += "#" + std::to_string(call);
      trace.emplace_back(name, copy_of(value));
    }
    loss = loss_fn(output, target);
  }
  trace.emplace_back("loss", copy_of(loss));

  loss.backward();
  for (const auto& [name, parameter] : parameters)
    if (parameter.grad().defined()) trace.emplace_back(name + ".grad", copy_of(parameter.grad()));
  step();
  for (const auto& [name, parameter] : parameters) trace.emplace_back(name + ".updated", copy_of(parameter));
  return trace;
}

void save_trace(const Trace& trace, const std::string& path) {
  std::string order;
  for (const auto& [name, tensor] : trace) {
    check(name.find(',') == std::string::npos, "save_trace: the name \"", name,
          "\" holds a comma, which separates names in the trace_order metadata");
    if (!order.empty()) order += ',';
    order += name;
  }
  save_file(trace, path, {{"trace_order", order}});
}

Trace load_trace(const std::string& path) {
  const nn::NamedTensors tensors = load_file(path);
  const Metadata metadata = load_metadata(path);
  auto found = metadata.find("trace_order");
  if (found == metadata.end()) return tensors;

  std::map<std::string, Tensor> by_name(tensors.begin(), tensors.end());
  Trace trace;
  std::stringstream order(found->second);
  for (std::string name; std::getline(order, name, ',');) {
    auto tensor = by_name.find(name);
    check<std::runtime_error>(tensor != by_name.end(), "load_trace: ", path, ": trace_order names \"", name,
                              "\", which the file does not hold (or names twice)");
    trace.emplace_back(name, tensor->second);
    by_name.erase(tensor);
  }
  check<std::runtime_error>(by_name.empty(), "load_trace: ", path, ": trace_order leaves out ",
                            by_name.size(), " of the file's tensors, the first \"",
                            by_name.empty() ? "" : by_name.begin()->first, "\"");
  return trace;
}

const TensorParity* ParityReport::first_divergence() const {
  for (const TensorParity& t : tensors)
    if (!t.agrees) return &t;
  return nullptr;
}

ParityReport compare_traces(const Trace& ours, const Trace& reference, ParityOptions options) {
  check(options.atol >= 0 && options.rtol >= 0,
        "compare_traces: tolerances must be >= 0, got atol=", options.atol, ", rtol=", options.rtol);
  const std::map<std::string, Tensor> theirs(reference.begin(), reference.end());
  ParityReport report;
  for (const auto& [name, tensor] : ours) {
    TensorParity result{.name = name, .max_abs_diff = std::numeric_limits<double>::infinity(), .problem = ""};
    auto found = theirs.find(name);
    if (found == theirs.end()) {
      result.problem = "missing in the reference";
    } else if (found->second.shape() != tensor.shape()) {
      result.problem = minigrad::detail::concat("shape ", tensor.shape(), " here, ", found->second.shape(),
                                                " in the reference");
    } else {
      result.max_abs_diff = max_abs_diff(tensor, found->second, options, result.agrees);
      if (!result.agrees) result.problem = "values differ";
    }
    report.tensors.push_back(result);
  }
  return report;
}

std::string to_string(const ParityReport& report) {
  std::ostringstream out;
  for (const TensorParity& t : report.tensors) {
    char diff[32];
    std::snprintf(diff, sizeof diff, "%.3g", t.max_abs_diff);
    out << (t.agrees ? "  ok    " : "  DIFF  ") << t.name << "  max abs diff " << diff
        << (t.agrees ? "" : "  (" + t.problem + ")") << "\n";
  }
  const TensorParity* first = report.first_divergence();
  if (first == nullptr) {
    out << "all " << report.tensors.size() << " tensors agree\n";
  } else {
    char diff[32];
    std::snprintf(diff, sizeof diff, "%.3g", first->max_abs_diff);
    out << "first divergence: " << first->name << " (" << first->problem << ", max abs diff " << diff
        << ")\n";
  }
  return out.str();
}

}  // namespace minigrad::parity
