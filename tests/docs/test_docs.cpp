// The docs cannot go stale: docs/ops.md and docs/write_your_own_script.md are checked here against
// the code they describe (docs/pytorch_to_minigrad.md is checked by test_pytorch_to_minigrad.cpp).
//  - docs/ops.md: its table is generated below from the derivative comment lines of the headers
//    (`// add: out = a + b;  grad_a = ...`), their `///` lines (the PyTorch name) and the gradcheck
//    tables of tests/; the file must hold exactly that table, and name every declared op.
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
#include "minigrad.hpp"

using namespace minigrad;
using namespace docs_support;

namespace {

// ---- docs/ops.md: the table, generated from the headers and the tests --------------------------

/// One row of the table: an op, its derivative line split in two, its PyTorch twin.
struct OpRow {
  std::string name;      // "add", "linear"
  std::string forward;   // "out = a + b"
  std::string backward;  // "grad_a = grad, grad_b = grad"
  std::string pytorch;   // "torch.add"
};

// A `//` line that is not a `///` doc line.
bool is_plain_comment(const std::string& line) {
  return starts_with(line, "//") && !starts_with(line, "///");
}

/// The ops of one header: each `// name: formula` block, continued on the next `//` lines until a
/// line of prose (one that starts with "(" or a capital letter), then the `///` lines, then a
/// declaration of `name`. The backward part starts at the first "grad_x" or "grad of"; an op
/// without one (view: "as reshape") shows the same text in both columns.
std::vector<OpRow> parse_ops(const std::string& header_text, const std::string& header) {
  const std::vector<std::string> lines = split_lines(header_text);
  const std::regex first_line(R"(// ([a-z_0-9]+): (.*))");
  const std::regex pytorch_name(R"(`((?:torch|F|Tensor)\.[A-Za-z0-9_.]+))");
  const std::regex backward_start(R"(\bgrad(_[A-Za-z]+| of))");
  std::vector<OpRow> rows;
  for (size_t i = 0; i < lines.size(); ++i) {
    std::smatch m;
    if (!std::regex_match(lines[i], m, first_line)) continue;
    OpRow row{m[1], "", "", ""};
    std::string text = m[2];
    size_t j = i + 1;
    bool prose = false;
    for (; j < lines.size() && is_plain_comment(lines[j]); ++j) {
      const std::string body = trim(lines[j].substr(2));
      prose = prose || body.empty() || body[0] == '(' || std::isupper(static_cast<unsigned char>(body[0]));
      if (!prose) text += " " + body;
    }
    std::string doc;
    for (; j < lines.size() && starts_with(trim(lines[j]), "///"); ++j) doc += lines[j] + "\n";
    if (j == lines.size() || lines[j].find(row.name + "(") == std::string::npos) {
      throw std::runtime_error(header + ":" + std::to_string(i + 1) + ": the derivative line of '" +
                               row.name + "' is not right above its declaration");
    }
    if (std::smatch p; std::regex_search(doc, p, pytorch_name)) row.pytorch = p[1];
    text = squeeze_spaces(text);
    if (std::smatch g; std::regex_search(text, g, backward_start)) {
      row.forward = std::regex_replace(text.substr(0, g.position()), std::regex(R"([;,\s]+$)"), "");
      row.backward = text.substr(g.position());
    } else {
      row.forward = row.backward = text;
    }
    rows.push_back(row);
  }
  return rows;
}

/// Source text without `//` comments (outside string literals), so a comment never counts.
std::string strip_comments(const std::string& text) {
  std::string out;
  for (const std::string& line : split_lines(text)) {
    bool in_string = false;
    size_t end = line.size();
    for (size_t k = 0; k < line.size(); ++k) {
      if (line[k] == '"' && (k == 0 || line[k - 1] != '\\')) in_string = !in_string;
      if (!in_string && line.compare(k, 2, "//") == 0) {
        end = k;
        break;
      }
    }
    out += line.substr(0, end) + "\n";
  }
  return out;
}

/// The top-level pieces of a test file: a piece starts at each line that begins in column 0 with
/// a declaration (a test case, a helper function, a table), so a table function and the test
/// case that runs it are separate pieces.
std::vector<std::string> top_level_pieces(const std::string& code) {
  std::vector<std::string> pieces(1);
  for (const std::string& line : split_lines(code)) {
    const bool starts_piece = !line.empty() && std::string(" \t}#").find(line[0]) == std::string::npos;
    if (starts_piece) pieces.emplace_back();
    pieces.back() += line + "\n";
  }
  return pieces;
}

/// True when a piece of test code gradchecks `op`: the piece mentions gradcheck, and the op is
/// called in one of its `return ...;` statements (the functions handed to gradcheck) or names a
/// row of its table (`{"add broadcast", ...}`).
bool gradchecks(const std::string& piece, const std::string& op) {
  std::string lower = piece;
  for (char& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (lower.find("gradcheck") == std::string::npos) return false;  // most pieces: no regex needed

  // Compiling a regex is the slow part: one pair per op, made once.
  static std::map<std::string, std::pair<std::regex, std::regex>> patterns;
  if (!patterns.contains(op)) {
    patterns.emplace(op, std::pair{std::regex("\\{\\s*\"" + op + "[ \"]"),
                                   std::regex("(^|[^A-Za-z0-9_])" + op + "\\s*\\(")});
  }
  const auto& [row, call] = patterns.at(op);
  if (std::regex_search(piece, row)) return true;
  static const std::regex return_statement(R"(return\s+([^;]*);)");
  for (std::sregex_iterator it(piece.begin(), piece.end(), return_statement), end; it != end; ++it) {
    const std::string expression = (*it)[1];
    if (std::regex_search(expression, call)) return true;
  }
  return false;
}

/// For each op, the test files (relative to the repo) with a gradcheck of it.
std::map<std::string, std::set<std::string>> gradcheck_files(const std::vector<std::string>& ops) {
  std::map<std::string, std::set<std::string>> found;
  for (const auto& entry : fs::recursive_directory_iterator(kSource / "tests")) {
    const fs::path relative = entry.path().lexically_relative(kSource);
    if (entry.path().extension() != ".cpp" || starts_with(relative.generic_string(), "tests/docs/")) continue;
    for (const std::string& piece : top_level_pieces(strip_comments(read_text(entry.path())))) {
      for (const std::string& op : ops) {
        if (gradchecks(piece, op)) found[op].insert(relative.generic_string());
      }
    }
  }
  return found;
}

// A table cell in code font: the header's own backticks (`dim`) would end it, and a '|' would end
// the cell, so the first are dropped and the second escaped.
std::string code_cell(const std::string& text) {
  const std::string plain = std::regex_replace(text, std::regex("`"), "");
  return "`" + std::regex_replace(plain, std::regex(R"(\|)"), "\\|") + "`";
}

const std::string kBegin = "<!-- BEGIN generated by tests/docs/test_docs.cpp: do not edit by hand -->";
const std::string kEnd = "<!-- END generated -->";

/// The generated part of docs/ops.md: one table per header, between the two marker lines.
std::string ops_tables() {
  const std::vector<std::pair<std::string, std::string>> headers = {
      {"autograd/ops.hpp", ""},
      {"autograd/ops_index.hpp", ""},
      {"nn/functional.hpp", "F::"},
      {"nn/loss.hpp", "F::"}};
  std::map<std::string, std::vector<OpRow>> rows;
  std::vector<std::string> names;
  for (const auto& [header, prefix] : headers) {
    rows[header] = parse_ops(read_text(kSource / header), header);
    for (const OpRow& row : rows[header]) names.push_back(row.name);
  }
  const auto gradchecked = gradcheck_files(names);

  std::string out = kBegin + "\n";
  for (const auto& [header, prefix] : headers) {
    out += "\n### " + header + "\n\n| op | forward | backward | PyTorch | gradcheck test |\n";
    out += "| --- | --- | --- | --- | --- |\n";
    for (const OpRow& row : rows[header]) {
      if (row.pytorch.empty()) {
        throw std::runtime_error(header + ": the /// comment of '" + row.name +
                                 "' names no PyTorch function (`torch.name`, `F.name` or `Tensor.name`)");
      }
      std::string tests = "no";
      if (gradchecked.contains(row.name)) {
        tests = "yes:";
        for (const std::string& file : gradchecked.at(row.name)) tests += " `" + file + "`";
      }
      out += "| " + code_cell(prefix + row.name) + " | " + code_cell(row.forward) + " | " +
             code_cell(row.backward) + " | `" + row.pytorch + "` | " + tests + " |\n";
    }
  }
  return out + "\n" + kEnd;
}

/// Every free function a header of the table declares (not operators, not detail::).
std::vector<std::string> declared_functions(const std::string& header_text) {
  const std::regex declaration(
      R"(^(?:inline )?(?:Tensor|bool|Shape|std::tuple<Tensor, Tensor>) ([a-z_0-9]+)\()");
  std::vector<std::string> names;
  bool in_detail = false;
  for (const std::string& line : split_lines(header_text)) {
    if (starts_with(line, "namespace detail")) in_detail = true;
    if (in_detail && starts_with(line, "}")) in_detail = false;
    std::smatch m;
    if (!in_detail && std::regex_search(line, m, declaration)) names.push_back(m[1]);
  }
  return names;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(docs)

BOOST_AUTO_TEST_CASE(ops_md_holds_the_table_generated_from_the_headers_and_tests) {
  const std::string doc = read_text(kSource / "docs/ops.md");
  const size_t begin = doc.find(kBegin), end = doc.find(kEnd);
  BOOST_TEST_REQUIRE((begin != std::string::npos && end != std::string::npos && begin < end),
                     "docs/ops.md lacks the marker lines " << kBegin << " and " << kEnd);
  const std::string expected = ops_tables();
  const std::string actual = doc.substr(begin, end + kEnd.size() - begin);
  if (actual != expected) {
    const fs::path fresh = fs::path(MINIGRAD_BINARY_DIR) / "ops.md";
    std::ofstream(fresh) << doc.substr(0, begin) << expected << doc.substr(end + kEnd.size());
    const std::string advice = "; check the difference and copy it over docs/ops.md";
    BOOST_ERROR("docs/ops.md is out of date (an op, a derivative line or a gradcheck changed): "
                << "the up-to-date file is " << fresh.string() << advice);
  }
}

BOOST_AUTO_TEST_CASE(ops_md_names_every_op_the_headers_declare) {
  const std::string doc = read_text(kSource / "docs/ops.md");
  for (const std::string header : {"autograd/ops.hpp", "autograd/ops_index.hpp", "nn/functional.hpp", "nn/loss.hpp"}) {
    for (const std::string& name : declared_functions(read_text(kSource / header))) {
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
  const std::vector<OpRow> rows = parse_ops(header, "test");
  BOOST_TEST_REQUIRE(rows.size() == 3u);
  BOOST_TEST(rows[0].forward == "out = a * b");
  BOOST_TEST(rows[0].backward == "grad_a = grad * b, grad_b = grad * a");
  BOOST_TEST(rows[0].pytorch == "torch.mul");
  BOOST_TEST(rows[1].backward == "grad_a = grad / count, broadcast back");  // the "(" line is prose
  BOOST_TEST(rows[1].pytorch == "torch.mean");
  BOOST_TEST(rows[2].forward == "as reshape");
  BOOST_TEST(rows[2].backward == "as reshape");
  BOOST_CHECK_THROW(
      parse_ops("// exp: out = e^a;  grad_a = grad * out\nTensor log(const Tensor& a);\n", "test"),
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
    BOOST_TEST_CONTEXT(c.what) { BOOST_TEST(gradchecks(c.code, "exp") == c.found); }
  }
  BOOST_TEST(strip_comments("x = 1;  // exp(\n") == "x = 1;  \n");
  BOOST_TEST(top_level_pieces("namespace {\nint f() {\n  return 1;\n}\n").size() == 3u);
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
