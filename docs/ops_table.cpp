// The table of docs/ops.md, made from the headers and the tests (see ops_table.hpp).
#include "docs/ops_table.hpp"

#include <algorithm>
#include <cctype>
#include <fstream>
#include <regex>
#include <sstream>
#include <stdexcept>

namespace minigrad_docs {

std::string read_text(const fs::path& path) {
  std::ifstream file(path);
  if (!file) throw std::runtime_error("cannot read " + path.string());
  std::ostringstream text;
  text << file.rdbuf();
  return text.str();
}

std::vector<std::string> split_lines(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

std::string trim(const std::string& s) {
  const size_t first = s.find_first_not_of(" \t");
  if (first == std::string::npos) return "";
  return s.substr(first, s.find_last_not_of(" \t") + 1 - first);
}

std::string squeeze_spaces(const std::string& s) {
  return trim(std::regex_replace(s, std::regex(R"(\s+)"), " "));
}

bool starts_with(const std::string& s, const std::string& prefix) { return s.rfind(prefix, 0) == 0; }

namespace {
// A `//` line that is not a `///` doc line.
bool is_plain_comment(const std::string& line) {
  return starts_with(line, "//") && !starts_with(line, "///");
}

// A table cell in code font: the header's own backticks (`dim`) would end it, and a '|' would end
// the cell, so the first are dropped and the second escaped.
std::string code_cell(const std::string& text) {
  const std::string plain = std::regex_replace(text, std::regex("`"), "");
  return "`" + std::regex_replace(plain, std::regex(R"(\|)"), "\\|") + "`";
}

}  // namespace

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

// The top-level pieces of a test file: a piece starts at each line that begins in column 0 with
// a declaration (a test case, a helper function, a table), so a table function and the test
// case that runs it are separate pieces.
std::vector<std::string> top_level_pieces(const std::string& code) {
  std::vector<std::string> pieces(1);
  for (const std::string& line : split_lines(code)) {
    const bool starts_piece = !line.empty() && std::string(" \t}#").find(line[0]) == std::string::npos;
    if (starts_piece) pieces.emplace_back();
    pieces.back() += line + "\n";
  }
  return pieces;
}

// True when a piece of test code gradchecks `op`: the piece mentions gradcheck, and the op is
// called in one of its `return ...;` statements (the functions handed to gradcheck) or names a
// row of its table (`{"add broadcast", ...}`).
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

std::map<std::string, std::set<std::string>> gradcheck_files(const fs::path& source,
                                                             const std::vector<std::string>& ops) {
  std::map<std::string, std::set<std::string>> found;
  for (const auto& entry : fs::recursive_directory_iterator(source / "tests")) {
    const fs::path relative = entry.path().lexically_relative(source);
    if (entry.path().extension() != ".cpp" || starts_with(relative.generic_string(), "tests/docs/")) continue;
    for (const std::string& piece : top_level_pieces(strip_comments(read_text(entry.path())))) {
      for (const std::string& op : ops) {
        if (gradchecks(piece, op)) found[op].insert(relative.generic_string());
      }
    }
  }
  return found;
}

std::vector<std::pair<std::string, std::string>> ops_headers(const fs::path& source) {
  std::vector<std::pair<std::string, std::string>> headers;
  std::vector<std::string> autograd;
  for (const auto& entry : fs::directory_iterator(source / "autograd")) {
    const std::string name = entry.path().filename().string();
    if (starts_with(name, "ops") && entry.path().extension() == ".hpp")
      autograd.push_back("autograd/" + name);
  }
  std::sort(autograd.begin(), autograd.end());
  for (const std::string& header : autograd) headers.emplace_back(header, "");
  headers.emplace_back("nn/functional.hpp", "F::");
  headers.emplace_back("nn/loss.hpp", "F::");
  return headers;
}

std::string ops_tables(const fs::path& source) {
  const auto headers = ops_headers(source);
  std::map<std::string, std::vector<OpRow>> rows;
  std::vector<std::string> names;
  for (const auto& [header, prefix] : headers) {
    rows[header] = parse_ops(read_text(source / header), header);
    for (const OpRow& row : rows[header]) names.push_back(row.name);
  }
  const auto gradchecked = gradcheck_files(source, names);

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

}  // namespace minigrad_docs
