// The docs cannot go stale: docs/ops.md and docs/write_your_own_script.md are checked here against
// the code they describe (docs/pytorch_to_minigrad.md is checked by test_pytorch_to_minigrad.cpp).
//  - docs/ops.md: its table is written by the `ops_md` target (docs/ops_table.hpp) from the
//    derivative comment lines of the headers, their `///` lines (the PyTorch name) and the
//    gradcheck tables of tests/; here the committed file must hold exactly that table, and name
//    every declared op.
//  - docs/write_your_own_script.md: its code blocks are lines of scripts/train_template.cpp, and
//    the built template trains, saves and reloads a checkpoint.
#include <boost/test/unit_test.hpp>
#include <cctype>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <string>
#include <vector>

#include "docs/docs_support.hpp"
#include "docs/ops_table.hpp"
#include "minigrad.hpp"

using namespace minigrad;
using namespace docs_support;
using minigrad_docs::OpRow;
namespace ops_md = minigrad_docs;

BOOST_AUTO_TEST_SUITE(docs)

BOOST_AUTO_TEST_CASE(ops_md_holds_the_table_generated_from_the_headers_and_tests) {
  const std::string doc = read_text(kSource / "docs/ops.md");
  const size_t begin = doc.find(ops_md::kBegin), end = doc.find(ops_md::kEnd);
  BOOST_TEST_REQUIRE((begin != std::string::npos && end != std::string::npos && begin < end),
                     "docs/ops.md lacks the marker lines " << ops_md::kBegin << " and " << ops_md::kEnd);
  const std::string actual = doc.substr(begin, end + ops_md::kEnd.size() - begin);
  BOOST_TEST(actual == ops_md::ops_tables(kSource),
             "docs/ops.md is out of date (an op, a derivative line or a gradcheck changed): run "
             "`cmake --build --preset release --target ops_md` and check the difference");
}

BOOST_AUTO_TEST_CASE(ops_md_names_every_op_the_headers_declare) {
  const std::string doc = read_text(kSource / "docs/ops.md");
  for (const auto& [header, prefix] : ops_md::ops_headers(kSource)) {
    for (const std::string& name : ops_md::declared_functions(read_text(kSource / header))) {
      BOOST_TEST_CONTEXT(header << ": " << name) {
        const bool listed = doc.find("`" + name + "`") != std::string::npos ||
                            doc.find("`F::" + name + "`") != std::string::npos;
        BOOST_TEST(listed, "docs/ops.md does not mention `" << name << "` declared in " << header);
      }
    }
  }
}

BOOST_AUTO_TEST_CASE(derivative_lines_split_into_forward_backward_and_pytorch_name) {
  const std::string header =
      "// mul: out = a * b;  grad_a = grad * b,  grad_b = grad * a\n"
      "/// Elementwise product (`torch.mul`).\n"
      "Tensor mul(const Tensor& a, const Tensor& b);\n"
      "// mean: out = sum / count;  grad_a = grad / count,\n"
      "// broadcast back\n"
      "// (floating dtypes only)\n"
      "/// As `values = torch.mean(a)` (`torch.mean`).\n"
      "Tensor mean(const Tensor& a);\n"
      "// view: as reshape\n"
      "/// (`Tensor.view`)\n"
      "Tensor view(const Tensor& a, const Shape& shape);\n";
  const std::vector<OpRow> rows = ops_md::parse_ops(header, "test");
  BOOST_TEST_REQUIRE(rows.size() == 3u);
  BOOST_TEST(rows[0].forward == "out = a * b");
  BOOST_TEST(rows[0].backward == "grad_a = grad * b, grad_b = grad * a");
  BOOST_TEST(rows[0].pytorch == "torch.mul");
  BOOST_TEST(rows[1].backward == "grad_a = grad / count, broadcast back");  // the "(" line is prose
  BOOST_TEST(rows[1].pytorch == "torch.mean");
  BOOST_TEST(rows[2].forward == "as reshape");
  BOOST_TEST(rows[2].backward == "as reshape");
  BOOST_CHECK_THROW(
      ops_md::parse_ops("// exp: out = e^a;  grad_a = grad * out\nTensor log(const Tensor& a);\n", "test"),
      std::runtime_error);
}

BOOST_AUTO_TEST_CASE(gradcheck_detection_needs_a_gradcheck_and_a_call_or_a_row_name) {
  struct Case {
    const char* what;
    std::string code;
    bool found;
  };
  const std::vector<Case> cases = {
      {"call in a gradchecked lambda", "void f() { gradcheck([](auto& x) { return exp(x[0]); }, in); }",
       true},
      {"row name of a gradcheck table", "std::vector<Row> gradcheck_rows = {{\"exp small\", f}};", true},
      {"method call", "BOOST_TEST(gradcheck([](auto& x) { return x[0].exp(); }, in));", true},
      {"no gradcheck in the piece", "void f() { return exp(x); }", false},
      {"only outside a return", "void f() { Tensor y = exp(x); gradcheck(g, {y}); return; }", false},
      {"a longer name", "void f() { gradcheck([](auto& x) { return expm1(x[0]); }, in); }", false},
      {"a row of another op", "std::vector<Row> gradcheck_rows = {{\"exponent\", f}};", false},
  };
  for (const Case& c : cases) {
    BOOST_TEST_CONTEXT(c.what) { BOOST_TEST(ops_md::gradchecks(c.code, "exp") == c.found); }
  }
  BOOST_TEST(ops_md::strip_comments("x = 1;  // exp(\n") == "x = 1;  \n");
  BOOST_TEST(ops_md::top_level_pieces("namespace {\nint f() {\n  return 1;\n}\n").size() == 3u);
}

// ---- scripts/train_template.cpp and its walkthrough ----------------------------------------------

BOOST_AUTO_TEST_CASE(train_template_learns_the_moons_and_reloads_its_checkpoint) {
  const fs::path program = fs::path(MINIGRAD_BINARY_DIR) / "scripts" / "train_template";
  BOOST_TEST_REQUIRE(fs::exists(program), program.string() << " is not built (target script_train_template)");
  const fs::path dir = fresh_folder("docs_train_template");
  const std::string command = "cd \"" + dir.string() + "\" && \"" + program.string() + "\" > output.txt 2>&1";
  const int status = std::system(command.c_str());
  const std::string output = read_text(dir / "output.txt");
  BOOST_TEST_REQUIRE(status == 0, output);

  std::smatch m;
  const std::regex summary(R"((\d+) steps in .* test accuracy ([0-9.]+)%, reloaded checkpoint ([0-9.]+)%)");
  BOOST_TEST_REQUIRE(std::regex_search(output, m, summary), output);
  BOOST_TEST(std::stod(m[2]) >= 90.0);
  BOOST_TEST(m[2] == m[3]);  // the reloaded weights predict what the trained ones did

  // The loss curve: one line per step, the last 50 steps far below the first 50.
  const Tensor curve = data::read_csv((dir / "train_template_loss.csv").string(), {.skip_header = true});
  BOOST_TEST(curve.size(0) == std::stoll(m[1]));
  const double first = curve.slice(0, 0, 50).select(1, 1).mean().item<double>();
  const double last = curve.slice(0, -50, curve.size(0)).select(1, 1).mean().item<double>();
  BOOST_TEST(last < first / 4);

  // The checkpoint holds the Classifier's parameters under PyTorch's dotted names.
  std::map<std::string, Shape> shapes;
  for (const auto& [name, t] : load_file((dir / "train_template.safetensors").string()))
    shapes[name] = t.shape();
  const std::map<std::string, Shape> expected = {
      {"hidden.weight", {16, 2}}, {"hidden.bias", {16}}, {"out.weight", {2, 16}}, {"out.bias", {2}}};
  BOOST_TEST((shapes == expected));
  fs::remove_all(dir);
}

BOOST_AUTO_TEST_CASE(walkthrough_code_blocks_are_lines_of_the_template) {
  std::set<std::string> template_lines;
  for (const std::string& line : split_lines(read_text(kSource / "scripts/train_template.cpp"))) {
    template_lines.insert(trim(line));
  }
  bool in_cpp = false;
  int checked = 0;
  for (const std::string& line : split_lines(read_text(kSource / "docs/write_your_own_script.md"))) {
    if (starts_with(trim(line), "```")) {
      in_cpp = trim(line) == "```cpp";
      continue;
    }
    if (!in_cpp || trim(line).empty() || trim(line) == "...") continue;
    BOOST_TEST(template_lines.contains(trim(line)), "not in scripts/train_template.cpp: " << trim(line));
    ++checked;
  }
  BOOST_TEST(checked > 30);
}

BOOST_AUTO_TEST_SUITE_END()
