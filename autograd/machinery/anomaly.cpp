// Anomaly detection: the counters and module names behind each node's forward_trace, and the check
// the backward engine runs on every gradient while detection is on (autograd/machinery/anomaly.hpp).
#include "autograd/machinery/anomaly.hpp"

#include <cmath>
#include <string>
#include <vector>

#include "autograd/op_support.hpp"
#include "autograd/tensor.hpp"

namespace minigrad {

namespace {

thread_local int64_t anomaly_op_count = 0;              // ops recorded since detection was turned on
thread_local std::vector<std::string> anomaly_modules;  // modules whose forward is running, innermost last

// "nan" if some element of g is nan, else "inf" if some element is infinite, else nullptr.
const char* non_finite_kind(const Tensor& g) {
  if (!g.is_floating_point()) return nullptr;  // int64 and bool hold neither
  return dispatch_floating(g.dtype(), "anomaly check", [&]<typename T>() -> const char* {
    const T* data = g.data_ptr<T>();
    bool infinite = false;
    for (int64_t i = 0; i < g.numel(); ++i) {
      if (std::isnan(data[i])) return "nan";
      infinite = infinite || std::isinf(data[i]);
    }
    return infinite ? "inf" : nullptr;
  });
}

}  // namespace

bool is_anomaly_enabled() { return detail::anomaly_enabled; }

void set_detect_anomaly(bool enabled) {
  if (enabled && !detail::anomaly_enabled) anomaly_op_count = 0;
  detail::anomaly_enabled = enabled;
}

namespace detail {

std::string anomaly_note_slow() {
  std::string note =
      "op #" + std::to_string(++anomaly_op_count) + " recorded since anomaly detection was turned on";
  if (!anomaly_modules.empty()) note += ", in the forward of " + anomaly_modules.back();
  return note;
}

AnomalyModuleScope::AnomalyModuleScope(std::string module) { anomaly_modules.push_back(std::move(module)); }
AnomalyModuleScope::~AnomalyModuleScope() { anomaly_modules.pop_back(); }

// Only gradients the engine will use are checked: one for an input that needs none is never read.
void check_backward_result(const Node& node, const std::vector<Tensor>& grads) {
  for (size_t i = 0; i < grads.size() && i < node.inputs.size(); ++i) {
    if (!grads[i].defined() || !node.gets_gradient(i)) continue;
    const char* kind = non_finite_kind(grads[i]);
    if (kind == nullptr) continue;
    const std::string where = node.forward_trace.empty()
                                  ? "unknown: it ran before anomaly detection was turned on (run the forward "
                                    "inside the DetectAnomalyGuard too)"
                                  : node.forward_trace;
    throw std::runtime_error(concat("Function '", node.name(), "' returned ", kind, " values in its ", i,
                                    "th output. Forward call that created it (output shape ",
                                    node.output_shape, "): ", where, "."));
  }
}

}  // namespace detail

}  // namespace minigrad
