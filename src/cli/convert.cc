// `tessera convert FILE...`: KAI Scheduler's and Volcano's Queues as Kueue's ClusterQueues,
// Cohorts and LocalQueues (config/foreign_queues.h). The YAML goes to stdout, what does not map
// to stderr. Input errors exit 1; a document with an error is left out, as the loader does.
#include <iostream>
#include <string>
#include <vector>

#include "cli/command.h"
#include "config/foreign_queues.h"
#include "config/loader.h"

namespace tessera::cli {
namespace {

// Kubernetes' rule for a name (DNS-1123 subdomain), as a CLI11 validator.
const CLI::Validator& NameRule() {
  static const CLI::Validator v(
      [](std::string& s) -> std::string {
        auto alnum = [](char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'); };
        bool ok = !s.empty() && s.size() <= 253 && alnum(s.front()) && alnum(s.back());
        for (char c : s) ok = ok && (alnum(c) || c == '-' || c == '.');
        return ok ? "" : "\"" + s + "\" is not a Kubernetes name (lowercase letters, digits, "
                                    "'-' and '.', starting and ending with a letter or digit)";
      },
      "NAME");
  return v;
}

int Convert(const std::vector<std::string>& files, const std::string& flavor,
            std::vector<std::string> namespaces) {
  LoadResult r = LoadManifestFiles(files);
  // The load's own conversion notices are printed below, from the conversion with these options;
  // errors and warnings of the input are the input's.
  for (const Diagnostic& d : r.diagnostics)
    if (d.severity != Diagnostic::Severity::kNotice) std::cerr << d.ToString() << "\n";
  if (r.foreign_queues.empty()) {
    std::cerr << "tessera convert: no KAI Queue (scheduling.run.ai/v2) or Volcano Queue "
                 "(scheduling.volcano.sh/v1beta1) in the input\n";
    return 1;
  }
  ConvertOptions options;
  options.flavor = flavor;
  options.namespaces = namespaces.empty() ? std::vector<std::string>{"default"} : namespaces;
  for (const ResourceFlavor& f : r.model.flavors)
    if (f.name == flavor && f.source.rfind(kConvertedSource, 0) != 0) options.emit_flavor = false;
  ConvertedQueues out = ConvertForeignQueues(r.foreign_queues, options);
  for (const Diagnostic& d : out.notices) std::cerr << d.ToString() << "\n";
  std::cout << out.yaml;
  if (!r.ok()) {
    std::cerr << "tessera convert: the input has errors; the documents that have them were left "
                 "out\n";
    return 1;
  }
  return 0;
}

}  // namespace

Command AddConvertCommand(CLI::App& app) {
  auto* cmd = app.add_subcommand(
      "convert",
      "Print KAI Scheduler and Volcano Queues as Kueue ClusterQueues, Cohorts and LocalQueues "
      "(docs/manifests.md); what does not map goes to stderr");
  auto files = std::make_shared<std::vector<std::string>>();
  auto flavor = std::make_shared<std::string>("default-flavor");
  auto namespaces = std::make_shared<std::vector<std::string>>();
  cmd->add_option("files", *files, "YAML manifest files holding the queues")->required();
  cmd->add_option("--flavor", *flavor, "the ResourceFlavor every quota names")
      ->check(NameRule());
  cmd->add_option("--namespace,-n", *namespaces,
                  "a namespace to give each converted leaf queue a LocalQueue in (repeatable; "
                  "default: default)")
      ->check(NameRule());
  return {cmd, [files, flavor, namespaces] { return Convert(*files, *flavor, *namespaces); }};
}

}  // namespace tessera::cli
