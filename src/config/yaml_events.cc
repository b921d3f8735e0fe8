// Duplicate keys and the alias budget of a manifest file; see yaml_events.h.
#include "config/yaml_events.h"

#include <algorithm>
#include <sstream>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "config/yaml_util.h"
#include "fmt/format.h"
#include "model/limits.h"
#include "yaml-cpp/eventhandler.h"
#include "yaml-cpp/exceptions.h"
#include "yaml-cpp/mark.h"
#include "yaml-cpp/parser.h"

namespace tessera::config_internal {
namespace {

// Sums stay far below int64_t's range however deep anchors of anchors go.
constexpr int64_t kSaturated = int64_t{1} << 60;
// Problems one document reports; the loader shows at most 50 diagnostics a document anyway.
constexpr size_t kMaxProblems = 50;

int64_t SaturatingAdd(int64_t a, int64_t b) { return std::min(a + b, kSaturated); }

struct Size {
  int64_t nodes = 0;
  int64_t bytes = 0;

  void Add(const Size& o) {
    nodes = SaturatingAdd(nodes, o.nodes);
    bytes = SaturatingAdd(bytes, o.bytes);
  }
};

// Follows the parser's events: sizes every node (remembering the size of each anchored one),
// charges every alias the size of its anchor, and keeps the keys of each open map.
class Handler : public YAML::EventHandler {
 public:
  Handler(int64_t nodes_left, int64_t bytes_left, int line_offset)
      : nodes_left_(nodes_left), bytes_left_(bytes_left), line_offset_(line_offset) {}

  void OnDocumentStart(const YAML::Mark&) override {}
  void OnDocumentEnd() override {}
  void OnNull(const YAML::Mark& mark, YAML::anchor_t anchor) override {
    Leaf({1, 0}, anchor, nullptr, mark.line);
  }
  void OnScalar(const YAML::Mark& mark, const std::string&, YAML::anchor_t anchor,
                const std::string& value) override {
    Leaf({1, static_cast<int64_t>(value.size())}, anchor, &value, mark.line);
  }
  void OnAlias(const YAML::Mark& mark, YAML::anchor_t anchor) override {
    // An alias of an anchor still open (`&a [*a]`) has no size yet; the walk's own budget
    // (DocContext::Visit) stops such a cycle.
    const Size s = anchor < anchors_.size() ? anchors_[anchor] : Size{1, 0};
    added_.Add(s);
    if (!over_budget_ && (added_.nodes > nodes_left_ || added_.bytes > bytes_left_)) {
      over_budget_ = true;
      Add(mark.line, "",
          fmt::format("YAML aliases expand this file too far: they may add at most {} nodes and "
                      "{} bytes to one file (anchors that refer to anchors?)",
                      kMaxYamlAliasNodesPerFile, kMaxYamlAliasBytesPerFile));
    }
    Leaf(s, YAML::NullAnchor, nullptr, mark.line);
  }
  void OnSequenceStart(const YAML::Mark&, const std::string&, YAML::anchor_t anchor,
                       YAML::EmitterStyle::value) override {
    OpenCollection(anchor, /*is_map=*/false);
  }
  void OnSequenceEnd() override { Close(); }
  void OnMapStart(const YAML::Mark&, const std::string&, YAML::anchor_t anchor,
                  YAML::EmitterStyle::value) override {
    OpenCollection(anchor, /*is_map=*/true);
  }
  void OnMapEnd() override { Close(); }

  const Size& added() const { return added_; }
  bool over_budget() const { return over_budget_; }
  std::vector<EventChecks::Problem>& problems() { return problems_; }

 private:
  struct Open {
    Size size{1, 0};
    YAML::anchor_t anchor = YAML::NullAnchor;
    bool is_map = false;
    int64_t children = 0;  // completed: a map's keys and values, a list's items
    std::string key;       // a map's latest key (the open value's)
    absl::flat_hash_map<std::string, int> key_lines;  // a map's scalar keys, 0-based lines
  };

  void OpenCollection(YAML::anchor_t anchor, bool is_map) {
    Open& o = open_.emplace_back();
    o.anchor = anchor;
    o.is_map = is_map;
  }

  // A node is complete: its size goes to its anchor and its parent; a map's key is checked.
  void Leaf(const Size& s, YAML::anchor_t anchor, const std::string* scalar, int line) {
    if (anchor != YAML::NullAnchor) {
      if (anchors_.size() <= anchor) anchors_.resize(anchor + 1);
      anchors_[anchor] = s;
    }
    if (open_.empty()) return;
    Open& parent = open_.back();
    parent.size.Add(s);
    if (parent.is_map && parent.children % 2 == 0) {
      parent.key = scalar != nullptr ? *scalar : std::string();
      if (scalar != nullptr) {
        auto [it, inserted] = parent.key_lines.try_emplace(*scalar, line);
        if (!inserted) {
          Add(line, JoinPath(PathOfInnermost(), *scalar),
              fmt::format("duplicate key \"{}\": it is also at line {}; one of them would be "
                          "ignored (Kubernetes refuses duplicate keys too)",
                          *scalar, it->second + line_offset_ + 1));
        }
      }
    }
    ++parent.children;
  }

  void Close() {
    if (open_.empty()) return;
    Open done = std::move(open_.back());
    open_.pop_back();
    Leaf(done.size, done.anchor, nullptr, 0);
  }

  // The field path of the innermost open collection.
  std::string PathOfInnermost() const {
    std::string path;
    for (size_t i = 0; i + 1 < open_.size(); ++i) {
      const Open& o = open_[i];
      path = o.is_map ? JoinPath(path, o.key) : IndexPath(path, static_cast<size_t>(o.children));
    }
    return path;
  }

  void Add(int line, std::string path, std::string message) {
    if (problems_.size() < kMaxProblems)
      problems_.push_back({line, std::move(path), std::move(message)});
  }

  const int64_t nodes_left_;
  const int64_t bytes_left_;
  const int line_offset_;
  std::vector<Size> anchors_;  // by yaml-cpp's anchor id (1, 2, ... in a document)
  std::vector<Open> open_;     // collections being read, innermost last
  Size added_;
  bool over_budget_ = false;
  std::vector<EventChecks::Problem> problems_;
};

}  // namespace

std::vector<EventChecks::Problem> EventChecks::Check(std::string_view text, int line_offset) {
  Handler handler(kMaxYamlAliasNodesPerFile - alias_nodes_,
                  kMaxYamlAliasBytesPerFile - alias_bytes_, line_offset);
  try {
    std::istringstream in{std::string(text)};
    YAML::Parser parser(in);
    parser.HandleNextDocument(handler);
  } catch (const YAML::Exception&) {
    // The real parse reports it, with its line.
  }
  if (handler.problems().empty()) {
    alias_nodes_ = SaturatingAdd(alias_nodes_, handler.added().nodes);
    alias_bytes_ = SaturatingAdd(alias_bytes_, handler.added().bytes);
  }
  return std::move(handler.problems());
}

}  // namespace tessera::config_internal
