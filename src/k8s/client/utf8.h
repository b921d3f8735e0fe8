// Strings from the wire as JSON can hold them: nlohmann::json throws when it dumps a string
// that is not UTF-8, and a broken stream can carry any bytes (proto_fuzz found it).
//
// Thread-safety: pure functions.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace tessera::k8s {

// Length of the well-formed UTF-8 sequence at the start of `s` (RFC 3629: no overlongs, no
// surrogates, at most U+10FFFF); 0 when it is not one.
inline size_t Utf8Sequence(std::string_view s) {
  const auto b = [&](size_t i) { return static_cast<unsigned char>(s[i]); };
  const unsigned char c = b(0);
  if (c < 0x80) return 1;
  const size_t n = c >= 0xf0 ? 4 : c >= 0xe0 ? 3 : c >= 0xc2 ? 2 : 0;
  if (n == 0 || c > 0xf4 || s.size() < n) return 0;
  for (size_t i = 1; i < n; ++i)
    if ((b(i) & 0xc0) != 0x80) return 0;
  if ((c == 0xe0 && b(1) < 0xa0) || (c == 0xed && b(1) >= 0xa0) || (c == 0xf0 && b(1) < 0x90) ||
      (c == 0xf4 && b(1) >= 0x90))
    return 0;
  return n;
}

// `in` with every byte that does not start a well-formed UTF-8 sequence replaced by U+FFFD.
inline std::string ToValidUtf8(std::string_view in) {
  std::string out;
  out.reserve(in.size());
  while (!in.empty()) {
    const size_t n = Utf8Sequence(in);
    if (n == 0) {
      out += "\xef\xbf\xbd";
      in.remove_prefix(1);
    } else {
      out.append(in.data(), n);
      in.remove_prefix(n);
    }
  }
  return out;
}

}  // namespace tessera::k8s
