// libFuzzer entry for the protobuf decoder of the API server's answers: any bytes, as a whole
// enveloped object (a list) and as one watch frame, give a decoded object or an error; never a
// crash, a hang or an allocation beyond what the bytes can describe. The same bytes also go
// through the JSON reading the informer does, as a watch line. Built with TESSERA_FUZZ (clang);
// scripts/fuzz.sh runs it on tests/fuzz/proto/.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "k8s/client/proto.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view bytes(reinterpret_cast<const char*>(data), size);
  if (auto o = tessera::k8s::proto::DecodeObject(bytes); o.ok()) (void)o->dump();
  if (auto e = tessera::k8s::proto::DecodeWatchEvent(bytes); e.ok()) (void)e->dump();
  (void)tessera::k8s::proto::ErrorText(bytes, "application/vnd.kubernetes.protobuf");
  (void)tessera::k8s::proto::ErrorText(bytes, "application/json");
  return 0;
}
