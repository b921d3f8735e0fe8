// Parsing JSON that comes from outside the process (the API server's answers and watch events,
// serve's answers to `tessera get`, the accounting store) without letting its nesting decide how
// deep the stack goes. nlohmann::json parses iteratively, but dump(), copies and comparisons of
// the result recurse once per level: a document of 300,000 nested arrays parses, then crashes the
// process the first time it is printed or copied. Every such parse goes through ParseJsonBounded,
// which refuses a document nested deeper than kMaxJsonDepth (model/limits.h) while parsing, before
// any of it is kept.
//
// Header-only, like model/bounded_read.h, so that every library that reads JSON uses it without
// a new link dependency. Thread-safety: pure functions.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <utility>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "fmt/format.h"
#include "model/limits.h"
#include "nlohmann/json.hpp"

namespace tessera {

namespace bounded_json_internal {

// nlohmann's DOM builder with a depth count in front of it: the parse stops (false) at the first
// object or array beyond `max_depth`, and the reason is kept for the message.
class DepthLimitedSax {
 public:
  using json = nlohmann::json;
  DepthLimitedSax(json& root, int max_depth) : dom_(root, /*allow_exceptions=*/false), max_(max_depth) {}

  bool null() { return dom_.null(); }
  bool boolean(bool v) { return dom_.boolean(v); }
  bool number_integer(json::number_integer_t v) { return dom_.number_integer(v); }
  bool number_unsigned(json::number_unsigned_t v) { return dom_.number_unsigned(v); }
  bool number_float(json::number_float_t v, const json::string_t& s) {
    return dom_.number_float(v, s);
  }
  bool string(json::string_t& v) { return dom_.string(v); }
  bool binary(json::binary_t& v) { return dom_.binary(v); }
  bool start_object(std::size_t n) { return Deeper() && dom_.start_object(n); }
  bool key(json::string_t& k) { return dom_.key(k); }
  bool end_object() {
    --depth_;
    return dom_.end_object();
  }
  bool start_array(std::size_t n) { return Deeper() && dom_.start_array(n); }
  bool end_array() {
    --depth_;
    return dom_.end_array();
  }
  bool parse_error(std::size_t /*position*/, const std::string& /*token*/,
                   const nlohmann::detail::exception& ex) {
    if (error_.empty()) error_ = ex.what();
    return false;
  }

  bool too_deep() const { return too_deep_; }
  const std::string& error() const { return error_; }

 private:
  bool Deeper() {
    if (++depth_ <= max_) return true;
    too_deep_ = true;
    return false;
  }

  nlohmann::detail::json_sax_dom_parser<json> dom_;
  const int max_;
  int depth_ = 0;
  bool too_deep_ = false;
  std::string error_;
};

}  // namespace bounded_json_internal

// `text` as JSON. InvalidArgument when it is not JSON ("WHAT: not JSON: <the parser's message>")
// or when objects and arrays nest deeper than `max_depth` ("WHAT: JSON nested deeper than 512
// levels"); `what` names the input (a URL, a file, "watch event").
[[nodiscard]] inline absl::StatusOr<nlohmann::json> ParseJsonBounded(
    std::string_view text, std::string_view what, int max_depth = kMaxJsonDepth) {
  nlohmann::json out;
  bounded_json_internal::DepthLimitedSax sax(out, max_depth);
  const bool ok = nlohmann::json::sax_parse(text, &sax, nlohmann::json::input_format_t::json,
                                            /*strict=*/true, /*ignore_comments=*/false);
  if (sax.too_deep())
    return absl::InvalidArgumentError(
        fmt::format("{}: JSON nested deeper than {} levels", what, max_depth));
  if (!ok)
    return absl::InvalidArgumentError(fmt::format(
        "{}: not JSON: {}", what, sax.error().empty() ? "a parse error" : sax.error()));
  return out;
}

// As above, with the answer nlohmann::json::parse(text, nullptr, false) gives: a discarded value
// (is_discarded()) for anything that is not JSON or nests too deep, for callers that only ask
// whether it was JSON.
[[nodiscard]] inline nlohmann::json ParseJsonOrDiscarded(std::string_view text,
                                                         int max_depth = kMaxJsonDepth) {
  auto parsed = ParseJsonBounded(text, "", max_depth);
  if (!parsed.ok()) return nlohmann::json(nlohmann::json::value_t::discarded);
  return std::move(*parsed);
}

}  // namespace tessera
