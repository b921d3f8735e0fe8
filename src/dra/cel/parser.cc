// The lexer and recursive-descent parser of CEL (the grammar of cel-spec's CEL.g4), with the
// macros of the standard library (has, all, exists, exists_one, map, filter) and cel.bind
// expanded into their own nodes.
#include <cstdlib>
#include <string>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "dra/cel/internal.h"

namespace tessera::dra::cel {
namespace {

enum class Tok : uint8_t { kEnd, kIdent, kInt, kUint, kDouble, kString, kBytes, kPunct };
struct Token {
  Tok kind = Tok::kEnd;
  int pos = 0;
  std::string text;  // identifier, punctuation, or the decoded string/bytes
  int64_t i = 0;
  uint64_t u = 0;
  double d = 0;
};

constexpr int kMaxDepth = 100;

bool IsReserved(absl::string_view s) {
  static constexpr absl::string_view kWords[] = {
      "as", "break", "const", "continue", "else", "for", "function", "if", "import", "let",
      "loop", "package", "namespace", "return", "var", "void", "while", "in", "true", "false",
      "null"};
  for (auto w : kWords) {
    if (s == w) return true;
  }
  return false;
}

void AppendUtf8(std::string& out, uint32_t cp) {
  if (cp < 0x80) {
    out += static_cast<char>(cp);
  } else if (cp < 0x800) {
    out += static_cast<char>(0xC0 | (cp >> 6));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else if (cp < 0x10000) {
    out += static_cast<char>(0xE0 | (cp >> 12));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else {
    out += static_cast<char>(0xF0 | (cp >> 18));
    out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  }
}

class Parser {
 public:
  explicit Parser(absl::string_view src) : src_(src) {}

  absl::StatusOr<NodeP> Run() {
    if (!Lex()) return Fail();
    NodeP e = Expr();
    if (e && Peek().kind != Tok::kEnd) SetError(Peek().pos, "unexpected '" + Peek().text + "'");
    if (!error_.empty()) return Fail();
    return e;
  }

 private:
  absl::Status Fail() {
    return absl::InvalidArgumentError(absl::StrCat(Where(src_, error_pos_), ": ", error_));
  }
  void SetError(int pos, std::string msg) {
    if (error_.empty()) {
      error_pos_ = pos;
      error_ = std::move(msg);
    }
  }

  // ---- lexer ----
  bool LexString(size_t& i, Token& t) {
    bool raw = false, bytes = false;
    while (src_[i] == 'r' || src_[i] == 'R' || src_[i] == 'b' || src_[i] == 'B') {
      if (src_[i] == 'r' || src_[i] == 'R') raw = true; else bytes = true;
      ++i;
    }
    char q = src_[i];
    bool triple = src_.substr(i, 3) == std::string(3, q);
    i += triple ? 3 : 1;
    std::string out;
    while (true) {
      if (i >= src_.size()) return SetError(t.pos, "unterminated string literal"), false;
      char c = src_[i];
      if (triple ? src_.substr(i, 3) == std::string(3, q) : c == q) {
        i += triple ? 3 : 1;
        break;
      }
      if (!triple && (c == '\n' || c == '\r')) {
        return SetError(t.pos, "newline in a string literal"), false;
      }
      if (c != '\\' || raw) {
        out += c;
        ++i;
        continue;
      }
      if (i + 1 >= src_.size()) return SetError(t.pos, "unterminated string literal"), false;
      char e = src_[i + 1];
      i += 2;
      auto hex = [&](int n, uint32_t& v) {
        v = 0;
        for (int k = 0; k < n; ++k, ++i) {
          if (i >= src_.size() || !isxdigit(static_cast<unsigned char>(src_[i]))) return false;
          char h = src_[i];
          v = v * 16 + (isdigit(static_cast<unsigned char>(h)) ? h - '0' : (tolower(h) - 'a' + 10));
        }
        return true;
      };
      uint32_t v = 0;
      switch (e) {
        case 'a': out += '\a'; break;
        case 'b': out += '\b'; break;
        case 'f': out += '\f'; break;
        case 'n': out += '\n'; break;
        case 'r': out += '\r'; break;
        case 't': out += '\t'; break;
        case 'v': out += '\v'; break;
        case '\\': case '\'': case '"': case '`': case '?': out += e; break;
        case 'x': case 'X':
          if (!hex(2, v)) return SetError(t.pos, "invalid \\x escape"), false;
          if (bytes) out += static_cast<char>(v); else AppendUtf8(out, v);
          break;
        case 'u': case 'U':
          if (bytes) return SetError(t.pos, "\\u escape in a bytes literal"), false;
          if (!hex(e == 'u' ? 4 : 8, v) || v > 0x10FFFF || (v >= 0xD800 && v < 0xE000)) {
            return SetError(t.pos, "invalid unicode escape"), false;
          }
          AppendUtf8(out, v);
          break;
        default:
          if (e >= '0' && e <= '3' && i + 1 < src_.size() && src_[i] >= '0' && src_[i] <= '7' &&
              src_[i + 1] >= '0' && src_[i + 1] <= '7') {
            v = (e - '0') * 64 + (src_[i] - '0') * 8 + (src_[i + 1] - '0');
            i += 2;
            if (bytes) out += static_cast<char>(v); else AppendUtf8(out, v);
            break;
          }
          return SetError(t.pos, absl::StrCat("invalid escape '\\", std::string(1, e), "'")), false;
      }
    }
    t.kind = bytes ? Tok::kBytes : Tok::kString;
    t.text = std::move(out);
    return true;
  }

  bool LexNumber(size_t& i, Token& t) {
    size_t start = i;
    if (src_.substr(i, 2) == "0x" || src_.substr(i, 2) == "0X") {
      i += 2;
      while (i < src_.size() && isxdigit(static_cast<unsigned char>(src_[i]))) ++i;
    } else {
      while (i < src_.size() && isdigit(static_cast<unsigned char>(src_[i]))) ++i;
      bool dbl = false;
      if (i + 1 < src_.size() && src_[i] == '.' && isdigit(static_cast<unsigned char>(src_[i + 1]))) {
        dbl = true;
        ++i;
        while (i < src_.size() && isdigit(static_cast<unsigned char>(src_[i]))) ++i;
      }
      if (i < src_.size() && (src_[i] == 'e' || src_[i] == 'E')) {
        size_t j = i + 1;
        if (j < src_.size() && (src_[j] == '+' || src_[j] == '-')) ++j;
        if (j < src_.size() && isdigit(static_cast<unsigned char>(src_[j]))) {
          dbl = true;
          i = j;
          while (i < src_.size() && isdigit(static_cast<unsigned char>(src_[i]))) ++i;
        }
      }
      if (dbl) {
        t.kind = Tok::kDouble;
        t.text = std::string(src_.substr(start, i - start));
        t.d = std::strtod(t.text.c_str(), nullptr);
        return true;
      }
    }
    t.text = std::string(src_.substr(start, i - start));
    t.kind = Tok::kInt;
    if (i < src_.size() && (src_[i] == 'u' || src_[i] == 'U')) {
      t.kind = Tok::kUint;
      ++i;
    }
    return true;
  }

  bool Lex() {
    size_t i = 0;
    while (true) {
      while (i < src_.size() && isspace(static_cast<unsigned char>(src_[i]))) ++i;
      if (i + 1 < src_.size() && src_[i] == '/' && src_[i + 1] == '/') {
        while (i < src_.size() && src_[i] != '\n') ++i;
        continue;
      }
      Token t;
      t.pos = static_cast<int>(i);
      if (i >= src_.size()) {
        toks_.push_back(t);
        return true;
      }
      char c = src_[i];
      size_t j = i;
      while (j < src_.size() && j < i + 2 && strchr("rRbB", src_[j])) ++j;
      if (j < src_.size() && (src_[j] == '"' || src_[j] == '\'') &&
          (j == i || isalpha(static_cast<unsigned char>(c)))) {
        if (!LexString(i, t)) return false;
      } else if (isalpha(static_cast<unsigned char>(c)) || c == '_') {
        while (j < src_.size() && (isalnum(static_cast<unsigned char>(src_[j])) || src_[j] == '_')) ++j;
        t.kind = Tok::kIdent;
        t.text = std::string(src_.substr(i, j - i));
        i = j;
      } else if (isdigit(static_cast<unsigned char>(c)) ||
                 (c == '.' && i + 1 < src_.size() && isdigit(static_cast<unsigned char>(src_[i + 1])))) {
        if (!LexNumber(i, t)) return false;
      } else {
        static constexpr absl::string_view kPunct[] = {"==", "!=", "<=", ">=", "&&", "||", "<", ">",
                                                      "!", "+", "-", "*", "/", "%", "?", ":", ".",
                                                      ",", "(", ")", "[", "]", "{", "}"};
        bool found = false;
        for (auto p : kPunct) {
          if (src_.substr(i, p.size()) == p) {
            t.kind = Tok::kPunct;
            t.text = std::string(p);
            i += p.size();
            found = true;
            break;
          }
        }
        if (!found) return SetError(t.pos, absl::StrCat("unexpected character '", std::string(1, c), "'")), false;
      }
      toks_.push_back(std::move(t));
    }
  }

  // ---- parser ----
  const Token& Peek(int k = 0) const {
    size_t i = std::min(at_ + k, toks_.size() - 1);
    return toks_[i];
  }
  bool IsP(absl::string_view p, int k = 0) const {
    return Peek(k).kind == Tok::kPunct && Peek(k).text == p;
  }
  bool Accept(absl::string_view p) {
    if (!IsP(p)) return false;
    ++at_;
    return true;
  }
  bool Expect(absl::string_view p) {
    if (Accept(p)) return true;
    const Token& t = Peek();
    SetError(t.pos, absl::StrCat("expected '", p, "' but found ",
                                 t.kind == Tok::kEnd ? "the end of the expression" : "'" + t.text + "'"));
    return false;
  }
  NodeP Make(NodeKind k, int pos) {
    auto n = std::make_unique<Node>();
    n->kind = k;
    n->pos = pos;
    return n;
  }
  NodeP Call(std::string name, int pos, NodeP a, NodeP b = nullptr) {
    NodeP n = Make(NodeKind::kCall, pos);
    n->name = std::move(name);
    n->args.push_back(std::move(a));
    if (b) n->args.push_back(std::move(b));
    return n;
  }
  struct DepthGuard {
    Parser* p;
    explicit DepthGuard(Parser* pp) : p(pp) { ++p->depth_; }
    ~DepthGuard() { --p->depth_; }
  };

  NodeP Expr() {
    DepthGuard g(this);
    if (depth_ > kMaxDepth) {
      SetError(Peek().pos, absl::StrCat("the expression nests deeper than ", kMaxDepth, " levels"));
      return nullptr;
    }
    NodeP c = Or();
    if (!c || !IsP("?")) return c;
    int pos = Peek().pos;
    ++at_;
    NodeP a = Or();
    if (!a || !Expect(":")) return nullptr;
    NodeP b = Expr();
    if (!b) return nullptr;
    NodeP n = Make(NodeKind::kCond, pos);
    n->args.push_back(std::move(c));
    n->args.push_back(std::move(a));
    n->args.push_back(std::move(b));
    return n;
  }
  NodeP Or() {
    NodeP l = And();
    while (l && IsP("||")) {
      int pos = Peek().pos;
      ++at_;
      NodeP r = And();
      if (!r) return nullptr;
      NodeP n = Make(NodeKind::kOr, pos);
      n->args.push_back(std::move(l));
      n->args.push_back(std::move(r));
      l = std::move(n);
    }
    return l;
  }
  NodeP And() {
    NodeP l = Relation();
    while (l && IsP("&&")) {
      int pos = Peek().pos;
      ++at_;
      NodeP r = Relation();
      if (!r) return nullptr;
      NodeP n = Make(NodeKind::kAnd, pos);
      n->args.push_back(std::move(l));
      n->args.push_back(std::move(r));
      l = std::move(n);
    }
    return l;
  }
  NodeP Relation() {
    NodeP l = Addition();
    while (l) {
      const Token& t = Peek();
      std::string op;
      if (t.kind == Tok::kPunct && (t.text == "==" || t.text == "!=" || t.text == "<" ||
                                    t.text == "<=" || t.text == ">" || t.text == ">=")) {
        op = t.text;
      } else if (t.kind == Tok::kIdent && t.text == "in") {
        op = "in";
      } else {
        break;
      }
      int pos = t.pos;
      ++at_;
      NodeP r = Addition();
      if (!r) return nullptr;
      l = Call(op, pos, std::move(l), std::move(r));
    }
    return l;
  }
  NodeP Addition() {
    NodeP l = Multiplication();
    while (l && (IsP("+") || IsP("-"))) {
      std::string op = Peek().text;
      int pos = Peek().pos;
      ++at_;
      NodeP r = Multiplication();
      if (!r) return nullptr;
      l = Call(op, pos, std::move(l), std::move(r));
    }
    return l;
  }
  NodeP Multiplication() {
    NodeP l = Unary();
    while (l && (IsP("*") || IsP("/") || IsP("%"))) {
      std::string op = Peek().text;
      int pos = Peek().pos;
      ++at_;
      NodeP r = Unary();
      if (!r) return nullptr;
      l = Call(op, pos, std::move(l), std::move(r));
    }
    return l;
  }
  NodeP Unary() {
    DepthGuard g(this);
    if (depth_ > kMaxDepth) {
      SetError(Peek().pos, absl::StrCat("the expression nests deeper than ", kMaxDepth, " levels"));
      return nullptr;
    }
    if (IsP("!") || (IsP("-") && Peek(1).kind != Tok::kInt && Peek(1).kind != Tok::kDouble)) {
      bool neg = Peek().text == "-";
      int pos = Peek().pos;
      ++at_;
      NodeP x = Unary();
      if (!x) return nullptr;
      NodeP n = Make(neg ? NodeKind::kNeg : NodeKind::kNot, pos);
      n->args.push_back(std::move(x));
      return n;
    }
    return Member();
  }

  NodeP Member();
  NodeP Primary();
  NodeP Literal(bool negative);
  bool Args(std::vector<NodeP>& out, absl::string_view close);
  NodeP MakeMacro(NodeP target, const std::string& name, int pos, std::vector<NodeP> args);

  absl::string_view src_;
  std::vector<Token> toks_;
  size_t at_ = 0;
  int depth_ = 0;
  std::string error_;
  int error_pos_ = 0;
};

bool Parser::Args(std::vector<NodeP>& out, absl::string_view close) {
  if (Accept(close)) return true;
  while (true) {
    NodeP a = Expr();
    if (!a) return false;
    out.push_back(std::move(a));
    if (Accept(close)) return true;
    if (!Expect(",")) return false;
    if (Accept(close)) return true;  // a trailing comma
  }
}

NodeP Parser::MakeMacro(NodeP target, const std::string& name, int pos, std::vector<NodeP> args) {
  static const std::pair<absl::string_view, Macro> kMacros[] = {
      {"exists", Macro::kExists}, {"all", Macro::kAll}, {"exists_one", Macro::kExistsOne},
      {"map", Macro::kMap}, {"filter", Macro::kFilter}};
  for (auto [n, m] : kMacros) {
    if (name != n) continue;
    if (args.size() == 3 && (m == Macro::kAll || m == Macro::kExists || m == Macro::kExistsOne)) {
      SetError(pos, absl::StrCat("the two-variable form of ", name, "() is not supported by Tessera's CEL evaluator"));
      return nullptr;
    }
    if (args.size() == 3 && m == Macro::kMap) {
      SetError(pos, "map() with a filter is not supported by Tessera's CEL evaluator");
      return nullptr;
    }
    if (args.size() != 2) return nullptr;  // not this macro: an ordinary (unknown) call
    if (args[0]->kind != NodeKind::kIdent) {
      SetError(args[0]->pos, "argument must be a simple name");
      return nullptr;
    }
    NodeP c = Make(NodeKind::kComprehension, pos);
    c->macro = m;
    c->name = args[0]->name;
    c->args.push_back(std::move(target));
    c->args.push_back(std::move(args[1]));
    return c;
  }
  return nullptr;
}

NodeP Parser::Member() {
  NodeP e = Primary();
  while (e && error_.empty()) {
    if (IsP(".")) {
      ++at_;
      if (IsP("?")) {
        SetError(Peek().pos, "optional field selection (.?) is not supported by Tessera's CEL evaluator");
        return nullptr;
      }
      const Token& id = Peek();
      if (id.kind != Tok::kIdent) {
        SetError(id.pos, "expected a field or function name after '.'");
        return nullptr;
      }
      ++at_;
      if (IsP("(")) {
        int pos = Peek().pos;
        ++at_;
        std::vector<NodeP> args;
        if (!Args(args, ")")) return nullptr;
        if (e->kind == NodeKind::kIdent && e->name == "cel" && id.text == "bind") {
          if (args.size() != 3) {
            SetError(pos, "cel.bind() takes a variable, an initializer and an expression");
            return nullptr;
          }
          if (args[0]->kind != NodeKind::kIdent) {
            SetError(args[0]->pos, "cel.bind() variable names must be simple identifiers");
            return nullptr;
          }
          NodeP b = Make(NodeKind::kBind, pos);
          b->name = args[0]->name;
          b->args.push_back(std::move(args[1]));
          b->args.push_back(std::move(args[2]));
          e = std::move(b);
          continue;
        }
        size_t n = args.size();
        if (n == 2 || n == 3) {
          std::string name = id.text;
          if (name == "exists" || name == "all" || name == "exists_one" || name == "map" ||
              name == "filter") {
            NodeP mac = MakeMacro(std::move(e), name, pos, std::move(args));
            if (!mac) return nullptr;
            e = std::move(mac);
            continue;
          }
        }
        NodeP c = Make(NodeKind::kCall, pos);
        c->name = id.text;
        c->member = true;
        c->args.push_back(std::move(e));
        for (auto& a : args) c->args.push_back(std::move(a));
        e = std::move(c);
      } else {
        NodeP s = Make(NodeKind::kSelect, id.pos);
        s->name = id.text;
        s->args.push_back(std::move(e));
        e = std::move(s);
      }
    } else if (IsP("[")) {
      int pos = Peek().pos;
      ++at_;
      if (IsP("?")) {
        SetError(Peek().pos, "optional index ([?) is not supported by Tessera's CEL evaluator");
        return nullptr;
      }
      NodeP i = Expr();
      if (!i || !Expect("]")) return nullptr;
      NodeP n = Make(NodeKind::kIndex, pos);
      n->args.push_back(std::move(e));
      n->args.push_back(std::move(i));
      e = std::move(n);
    } else if (IsP("{")) {
      SetError(Peek().pos, "message construction is not supported by Tessera's CEL evaluator");
      return nullptr;
    } else {
      break;
    }
  }
  return error_.empty() ? std::move(e) : nullptr;
}

NodeP Parser::Literal(bool negative) {
  const Token& t = Peek();
  NodeP n = Make(NodeKind::kLiteral, t.pos);
  ++at_;
  if (t.kind == Tok::kDouble) {
    n->literal.v = negative ? -t.d : t.d;
    return n;
  }
  std::string digits = t.text;
  int base = 10;
  if (digits.size() > 2 && (digits[1] == 'x' || digits[1] == 'X')) {
    base = 16;
    digits = digits.substr(2);
  }
  errno = 0;
  char* end = nullptr;
  if (t.kind == Tok::kUint) {
    unsigned long long v = std::strtoull(digits.c_str(), &end, base);
    if (errno == ERANGE || negative) {
      SetError(t.pos, "invalid uint literal");
      return nullptr;
    }
    n->literal.v = static_cast<uint64_t>(v);
    return n;
  }
  std::string s = (negative ? "-" : "") + digits;
  long long v = std::strtoll(s.c_str(), &end, base);
  if (errno == ERANGE) {
    SetError(t.pos, "invalid int literal");
    return nullptr;
  }
  n->literal.v = static_cast<int64_t>(v);
  return n;
}

NodeP Parser::Primary() {
  const Token& t = Peek();
  switch (t.kind) {
    case Tok::kEnd:
      SetError(t.pos, "unexpected end of the expression");
      return nullptr;
    case Tok::kInt: case Tok::kUint: case Tok::kDouble:
      return Literal(false);
    case Tok::kString: case Tok::kBytes: {
      NodeP n = Make(NodeKind::kLiteral, t.pos);
      if (t.kind == Tok::kString) n->literal.v = t.text; else n->literal.v = Bytes{t.text};
      ++at_;
      return n;
    }
    case Tok::kIdent: {
      NodeP n = Make(NodeKind::kIdent, t.pos);
      n->name = t.text;
      ++at_;
      if (n->name == "true" || n->name == "false") {
        n->kind = NodeKind::kLiteral;
        n->literal.v = n->name == "true";
        return n;
      }
      if (n->name == "null") {
        n->kind = NodeKind::kLiteral;
        return n;
      }
      if (IsReserved(n->name)) {
        SetError(t.pos, absl::StrCat("reserved identifier '", n->name, "'"));
        return nullptr;
      }
      if (!IsP("(")) return n;
      int pos = Peek().pos;
      ++at_;
      std::vector<NodeP> args;
      if (!Args(args, ")")) return nullptr;
      if (n->name == "has") {
        if (args.size() != 1 || args[0]->kind != NodeKind::kSelect) {
          SetError(args.empty() ? pos : args[0]->pos, "invalid argument to has() macro");
          return nullptr;
        }
        NodeP h = std::move(args[0]);
        h->kind = NodeKind::kHas;
        return h;
      }
      NodeP c = Make(NodeKind::kCall, pos);
      c->name = n->name;
      c->args = std::move(args);
      return c;
    }
    case Tok::kPunct:
      break;
  }
  if (t.text == "-" && (Peek(1).kind == Tok::kInt || Peek(1).kind == Tok::kDouble)) {
    ++at_;
    return Literal(true);
  }
  if (t.text == "(") {
    ++at_;
    NodeP e = Expr();
    if (!e || !Expect(")")) return nullptr;
    return e;
  }
  if (t.text == "[") {
    NodeP n = Make(NodeKind::kList, t.pos);
    ++at_;
    if (!Args(n->args, "]")) return nullptr;
    return n;
  }
  if (t.text == "{") {
    NodeP n = Make(NodeKind::kMap, t.pos);
    ++at_;
    if (Accept("}")) return n;
    while (true) {
      NodeP k = Expr();
      if (!k || !Expect(":")) return nullptr;
      NodeP v = Expr();
      if (!v) return nullptr;
      n->args.push_back(std::move(k));
      n->args.push_back(std::move(v));
      if (Accept("}")) return n;
      if (!Expect(",")) return nullptr;
      if (Accept("}")) return n;
    }
  }
  if (t.text == ".") {
    SetError(t.pos, "a leading '.' (root-scoped name) is not supported by Tessera's CEL evaluator");
    return nullptr;
  }
  SetError(t.pos, absl::StrCat("unexpected '", t.text, "'"));
  return nullptr;
}

}  // namespace

std::string Where(absl::string_view expression, int pos) {
  int line = 1, col = 1;
  for (int i = 0; i < pos && i < static_cast<int>(expression.size()); ++i) {
    if (expression[i] == '\n') {
      ++line;
      col = 1;
    } else if ((expression[i] & 0xC0) != 0x80) {
      ++col;
    }
  }
  return absl::StrCat(line, ":", col);
}

absl::StatusOr<NodeP> Parse(absl::string_view expression) { return Parser(expression).Run(); }

}  // namespace tessera::dra::cel
