// The inside of dra/cel: the AST, the static types of the checker and the runtime values.
//
// Thread-safety: plain values; a checked Program is immutable.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "dra/device.h"

namespace tessera::dra::cel {

// ---- static types ------------------------------------------------------------------------
enum class TypeKind : uint8_t {
  kDyn, kNull, kBool, kInt, kUint, kDouble, kString, kBytes, kList, kMap, kQuantity, kSemver,
  kDevice
};
struct Type;
using TypeP = std::shared_ptr<const Type>;
struct Type {
  TypeKind kind = TypeKind::kDyn;
  TypeP a, b;  // list: a = element; map: a = key, b = value
};
TypeP MakeType(TypeKind k, TypeP a = nullptr, TypeP b = nullptr);
std::string TypeName(const TypeP& t);

// ---- AST ---------------------------------------------------------------------------------
enum class NodeKind : uint8_t {
  kLiteral, kIdent, kSelect, kHas, kIndex, kCall, kList, kMap, kAnd, kOr, kNot, kNeg, kCond,
  kComprehension, kBind
};
enum class Macro : uint8_t { kNone, kExists, kAll, kExistsOne, kMap, kFilter };

// A semantic version (github.com/blang/semver/v4): build metadata kept but never compared.
struct Semver {
  uint64_t major = 0, minor = 0, patch = 0;
  std::vector<std::string> pre;  // dot-separated prerelease identifiers
  std::string build;
};
// A Kubernetes quantity (resource.Quantity): its exact value in billionths (finer fractions
// round up as ParseQuantity does), and its representation, which asInteger, isInteger and
// asApproximateFloat depend on: an int64 `value` x 10^`scale` when ParseQuantity's fast path
// took it (`small`), otherwise an inf.Dec of scale `dec_scale`.
struct Quantity {
  __int128 nanos = 0;
  bool small = false;
  int64_t value = 0;
  int32_t scale = 0;
  int32_t dec_scale = 9;
};

struct Value;
using ListP = std::shared_ptr<const std::vector<Value>>;
using MapP = std::shared_ptr<const std::vector<std::pair<Value, Value>>>;
struct Bytes {
  std::string data;
};
// Views of the device, so that attributes are read where used, not copied into maps.
struct DeviceRef {};
struct OuterMap {  // device.attributes or device.capacity
  bool capacity;
};
struct DomainMap {  // device.attributes["domain"] or device.capacity["domain"]
  bool capacity;
  std::string domain;
};
struct Error {
  std::string message;
};
struct Value {
  std::variant<std::monostate, bool, int64_t, uint64_t, double, std::string, Bytes, ListP, MapP,
               Quantity, Semver, DeviceRef, OuterMap, DomainMap, Error>
      v;
  bool is_error() const { return std::holds_alternative<Error>(v); }
};
Value Err(std::string message);

struct Node {
  NodeKind kind = NodeKind::kLiteral;
  int pos = 0;  // byte offset in the expression
  Value literal;
  std::string name;  // ident, selected field, function, bound or iteration variable
  bool member = false;  // kCall: args[0] is the receiver
  Macro macro = Macro::kNone;
  std::vector<std::unique_ptr<Node>> args;
  int slot = -1;  // kIdent of a variable, kComprehension, kBind: the variable's slot
  TypeP type;     // set by the checker
};
using NodeP = std::unique_ptr<Node>;

struct Program {
  std::string expression;
  NodeP root;
  int num_slots = 0;
};

// parser.cc: the syntax tree of `expression`, or "line:col: message".
absl::StatusOr<NodeP> Parse(absl::string_view expression);
// checker.cc: types every node, resolves variables to slots, and requires a bool (or dyn)
// result; errors name the place as "line:col".
absl::Status Check(Program& program);
// eval.cc: the value of the checked program on `device`.
absl::StatusOr<bool> Run(const Program& program, const Device& device);
// "line:col" of byte `pos` in `expression`.
std::string Where(absl::string_view expression, int pos);

// library.cc: Kubernetes' quantity and semver, and the string functions.
absl::StatusOr<Quantity> ParseQuantity(absl::string_view s);
absl::StatusOr<Semver> ParseSemver(absl::string_view s, bool normalize);
int CompareSemver(const Semver& a, const Semver& b);
// The library functions that take evaluated arguments (no macros or logic); an Error value on a
// runtime error. `name` is as written (member functions have the receiver first).
Value CallFunction(const std::string& name, bool member, std::vector<Value>& args,
                   uint64_t& cost);
// Equality and ordering of CEL (heterogeneous numeric comparisons, as cel-go with
// CrossTypeNumericComparisons); an Error when the types cannot be compared.
Value Equal(const Value& a, const Value& b, const Device& d);
Value Less(const Value& a, const Value& b);  // a < b as bool, or Error
// Device map views as concrete values (for size, iteration, equality): keys in order.
std::vector<std::string> MapKeys(const Value& map, const Device& d);
Value MapLookup(const Value& map, const Value& key, const Device& d, bool* found);
Value ToValue(const AttributeValue& a);
// A constant pattern of matches() that RE2 rejects fails at compile time, as upstream's
// ValidateRegexLiterals does.
absl::Status CheckRegex(const std::string& pattern);
bool ToQuantity(const Capacity& c, Quantity& out);

}  // namespace tessera::dra::cel
