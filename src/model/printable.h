// Text from the input (names, values, file names) made safe to print on a terminal: a name with
// an escape sequence in it must not move the cursor, recolour or retitle the user's terminal
// when a diagnostic quotes it. Every printer of diagnostics passes its line through here.
//
// Header-only, so that leaf libraries (src/fgd) use it without linking tessera_model.
// Thread-safety: pure functions.
#pragma once

#include <string>
#include <string_view>

namespace tessera {

// `text` with control characters (C0, DEL, C1), and bytes that are not UTF-8, written as \xHH
// (a backslash becomes \\ only where it could be mistaken for such an escape, before 'x').
// Printable ASCII and well-formed UTF-8 beyond U+009F pass unchanged, so file names and
// values in other scripts still read as written.
inline std::string EscapeNonPrintable(std::string_view text) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  out.reserve(text.size());
  auto escape = [&](unsigned char c) {
    out += "\\x";
    out += kHex[c >> 4];
    out += kHex[c & 0xf];
  };
  const size_t n = text.size();
  for (size_t i = 0; i < n;) {
    const auto c = static_cast<unsigned char>(text[i]);
    if (c < 0x80) {
      if (c < 0x20 || c == 0x7f) {
        escape(c);
      } else if (c == '\\' && i + 1 < n && text[i + 1] == 'x') {
        out += "\\\\";
      } else {
        out += static_cast<char>(c);
      }
      ++i;
      continue;
    }
    // The length of a well-formed UTF-8 sequence starting here, or 0.
    size_t len = c >= 0xc2 && c <= 0xdf   ? 2
                 : c >= 0xe0 && c <= 0xef ? 3
                 : c >= 0xf0 && c <= 0xf4 ? 4
                                          : 0;
    if (len > 0 && i + len <= n) {
      for (size_t k = 1; k < len; ++k) {
        if ((static_cast<unsigned char>(text[i + k]) & 0xc0) != 0x80) len = 0;
      }
    } else {
      len = 0;
    }
    const auto c1 = len > 0 ? static_cast<unsigned char>(text[i + 1]) : 0;
    const bool overlong_or_surrogate = (c == 0xe0 && c1 < 0xa0) || (c == 0xed && c1 >= 0xa0) ||
                                       (c == 0xf0 && c1 < 0x90) || (c == 0xf4 && c1 >= 0x90);
    const bool c1_control = c == 0xc2 && c1 >= 0x80 && c1 <= 0x9f;  // U+0080..U+009F
    if (len == 0 || overlong_or_surrogate || c1_control) {
      escape(c);
      ++i;
      continue;
    }
    out.append(text.substr(i, len));
    i += len;
  }
  return out;
}

// A whole human-readable output (a table, a summary, an explanation) made safe for a terminal:
// each line through EscapeNonPrintable, the line breaks kept. Every text output that quotes the
// input's names, reasons or a server's answer is written through here, so that a queue named
// "\x1b]0;title\x07" shows as that text and does not retitle or clear the user's terminal.
inline std::string TerminalText(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (size_t start = 0; start <= text.size();) {
    size_t end = text.find('\n', start);
    if (end == std::string_view::npos) end = text.size();
    out += EscapeNonPrintable(text.substr(start, end - start));
    if (end == text.size()) break;
    out += '\n';
    start = end + 1;
  }
  return out;
}

// `text` safe inside HTML text and double-quoted attributes (&, <, > and " as entities), for the
// HTML reports (fgd, cost, trace replay); nothing else changes.
inline std::string HtmlEscape(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      default:
        out += c;
    }
  }
  return out;
}

}  // namespace tessera
