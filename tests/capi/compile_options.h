// Compile options the C API tests pass to PJRT_Client_Compile, written as serialized
// CompileOptionsProto with the plugin's own wire writer.
#pragma once

#include <string>

#include "base/proto_wire.h"

namespace stablert::capi_test {

// A CompileOptionsProto for one replica and one partition on device `device_id`.
inline std::string SingleDeviceOptions(int device_id = 0) {
  proto::WireWriter ids;
  ids.Varint(1, device_id);
  proto::WireWriter assignment;
  assignment.Varint(1, 1);  // replica_count
  assignment.Varint(2, 1);  // computation_count
  assignment.Bytes(3, ids.data());
  proto::WireWriter build;
  build.Varint(4, 1);  // num_replicas
  build.Varint(5, 1);  // num_partitions
  build.Varint(6, 1);  // use_spmd_partitioning
  build.Bytes(9, assignment.data());
  proto::WireWriter options;
  options.Bytes(3, build.data());
  return options.Take();
}

}  // namespace stablert::capi_test
