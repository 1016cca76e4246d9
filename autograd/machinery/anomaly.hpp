// Anomaly detection: find the op whose backward first produced nan or inf, and where its forward ran.
//
// A nan in a gradient spreads to every gradient computed from it, hiding the op that made it. While
// anomaly detection is on (as `torch.autograd.detect_anomaly`), each recorded op notes where its
// forward ran, and the engine checks every gradient each backward function returns: the first one
// holding nan or inf (PyTorch stops at nan only) throws std::runtime_error naming the op and that
// note. Off by default, and then it costs one bool check per recorded op and per backward function.
// The flag is per thread, like grad mode.
#pragma once

#include <string>
#include <vector>

namespace minigrad {

class Tensor;
struct Node;

/// True while anomaly detection is on for this thread (`torch.is_anomaly_enabled()`).
bool is_anomaly_enabled();
/// Turns anomaly detection on or off for this thread (`torch.autograd.set_detect_anomaly`).
/// Turning it on restarts the count of recorded ops used in the notes ("op #3").
void set_detect_anomaly(bool enabled);

/// While alive, anomaly detection is on (`with torch.autograd.detect_anomaly():`). Run both the
/// forward and the backward inside it: a node recorded before it began has no note to report.
///   { DetectAnomalyGuard anomaly; loss = model(x); loss.backward(); }  // throws at the first nan
class DetectAnomalyGuard {
 public:
  DetectAnomalyGuard() : previous_(is_anomaly_enabled()) { set_detect_anomaly(true); }
  ~DetectAnomalyGuard() { set_detect_anomaly(previous_); }
  DetectAnomalyGuard(const DetectAnomalyGuard&) = delete;
  DetectAnomalyGuard& operator=(const DetectAnomalyGuard&) = delete;

 private:
  bool previous_;
};

namespace detail {

/// The flag itself, read inline so that the check costs one load when detection is off.
inline thread_local bool anomaly_enabled = false;

/// The note a new Node keeps (Node::forward_trace): empty while detection is off, otherwise
/// "op #3 recorded since anomaly detection was turned on, in the forward of net.0 (Linear ...)".
std::string anomaly_note_slow();
inline std::string anomaly_note() { return anomaly_enabled ? anomaly_note_slow() : std::string(); }

/// While alive, ops recorded on this thread are noted as made in the forward of `module`
/// (its path and configuration, e.g. "net.0 (Linear in_features=16, out_features=64, bias=True)").
/// nn::Module's operator() opens one while detection is on; scopes nest as modules call modules.
class AnomalyModuleScope {
 public:
  explicit AnomalyModuleScope(std::string module);
  ~AnomalyModuleScope();
  AnomalyModuleScope(const AnomalyModuleScope&) = delete;
  AnomalyModuleScope& operator=(const AnomalyModuleScope&) = delete;
};

/// The engine's check after node.backward returned `grads` (one per input): throws
/// std::runtime_error at the first gradient, of an input that requires grad, holding nan or inf:
/// "Function 'LogBackward0' returned nan values in its 0th output." (PyTorch's words), followed by
/// where the node's forward ran.
void check_backward_result(const Node& node, const std::vector<Tensor>& grads);

}  // namespace detail

}  // namespace minigrad
