// to_dot: the graph behind a tensor, printed in Graphviz's DOT language.
//
// One walk from the root with an explicit stack (no recursion, so a 100,000-op chain draws as
// well as a 3-op one) numbers every tensor the first time it is met and notes one arrow per
// (input, op) pair; then the boxes are printed in number order, then the arrows.
#include "autograd/machinery/graph.hpp"

#include <cmath>
#include <cstdio>
#include <sstream>
#include <unordered_map>

#include "autograd/op_support.hpp"

namespace minigrad {

using detail::check;

namespace {

// The text between the quotes of a DOT string: quotes and backslashes escaped, line breaks as \n.
std::string escape(const std::string& text) {
  std::string out;
  for (char c : text) {
    if (c == '\n') {
      out += "\\n";
      continue;
    }
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  return out;
}

// "data min=-0.5 max=1.2 mean=0.03" (4 significant digits); a nan anywhere makes all three nan.
std::string summary(const char* what, const Tensor& t) {
  if (t.numel() == 0) return std::string(what) + " empty";
  if (!t.impl()->storage) return std::string(what) + " freed (no backward reads it)";
  const std::vector<double> values = t.to_vector<double>();
  double low = values[0], high = values[0], total = 0;
  for (double v : values) {
    if (std::isnan(v) || v < low) low = v;
    if (std::isnan(v) || v > high) high = v;
    total += v;
  }
  char buffer[160];
  std::snprintf(buffer, sizeof buffer, "%s min=%.4g max=%.4g mean=%.4g", what, low, high,
                total / static_cast<double>(values.size()));
  return buffer;
}

// The first line of a box: the op and its output shape, or the leaf's name and shape.
std::string headline(const Tensor& t, const std::string* name) {
  const Node* node = t.grad_fn().get();
  if (node) return std::string(node->name()) + " " + to_string(t.shape()) + (name ? "\n" + *name : "");
  if (name) return *name + " " + to_string(t.shape());
  if (t.dim() == 0 && !t.requires_grad()) {  // a number written in the code: `x * 0.5`
    char buffer[64];
    std::snprintf(buffer, sizeof buffer, "scalar %.4g", t.item<double>());
    return buffer;
  }
  return "input " + to_string(t.shape());
}

// Fill colours as torchviz's: ops gray, trained leaves blue, the output green.
std::string style(const Tensor& t, bool is_root) {
  if (is_root) return "style=filled, fillcolor=darkolivegreen1, penwidth=2";
  if (t.grad_fn()) return "style=filled, fillcolor=lightgray";
  if (t.requires_grad()) return "style=filled, fillcolor=lightblue";
  return "";
}

}  // namespace

std::string to_dot(const Tensor& root, const std::vector<std::pair<std::string, Tensor>>& names,
                   DotOptions options) {
  check(root.defined(), "to_dot: got an undefined tensor to draw");
  std::unordered_map<const TensorImpl*, std::string> name_of;
  for (const auto& [name, tensor] : names) {
    check(tensor.defined(), "to_dot: the tensor named \"", name, "\" is undefined");
    name_of.try_emplace(tensor.impl(), name);  // a tensor given twice keeps its first name
  }

  // Number the tensors in the order the walk meets them; one arrow per input of each op.
  std::vector<Tensor> boxes{root};
  std::unordered_map<const TensorImpl*, size_t> id{{root.impl(), 0}};
  std::vector<std::pair<size_t, size_t>> arrows;
  std::vector<Tensor> stack{root};
  while (!stack.empty()) {
    const Tensor tensor = stack.back();
    stack.pop_back();
    const Node* node = tensor.grad_fn().get();
    if (!node) continue;  // a leaf: nothing behind it
    std::vector<Tensor> found;
    for (const Tensor& input : node->inputs) {
      if (!input.defined()) continue;  // an optional input left out, as a Linear's missing bias
      auto [slot, inserted] = id.try_emplace(input.impl(), boxes.size());
      if (inserted) {
        boxes.push_back(input);
        found.push_back(input);
      }
      arrows.emplace_back(slot->second, id.at(tensor.impl()));
    }
    stack.insert(stack.end(), found.rbegin(), found.rend());  // the first input is drawn next
  }

  std::ostringstream out;
  out << "digraph autograd {\n"
      << "  // Drawn by minigrad::to_dot. Render: dot -Tsvg this.dot -o this.svg\n"
      << "  node [shape=box, fontname=\"Helvetica\", fontsize=11];\n";
  for (size_t i = 0; i < boxes.size(); ++i) {
    const Tensor& t = boxes[i];
    auto found = name_of.find(t.impl());
    std::string label = headline(t, found == name_of.end() ? nullptr : &found->second);
    if (options.show_data) label.append("\n").append(summary("data", t));
    if (options.show_grad && t.grad().defined()) label.append("\n").append(summary("grad", t.grad()));
    const std::string attributes = style(t, i == 0);
    out << "  t" << i << " [label=\"" << escape(label) << "\"" << (attributes.empty() ? "" : ", ")
        << attributes << "];\n";
  }
  for (const auto& [from, to] : arrows) out << "  t" << from << " -> t" << to << ";\n";
  out << "}\n";
  return out.str();
}

}  // namespace minigrad
