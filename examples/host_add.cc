// Adds two int32 scalars on any PJRT plugin with the host library:
//   build/host_add PLUGIN PROGRAM.mlirbc   (PROGRAM: tests/testdata/programs/add_i32.1_17_0.mlirbc)
#include <cstdio>
#include <cstring>
#include <fstream>
#include <sstream>

#include "host/buffer.h"
#include "host/client.h"
#include "host/executable.h"
#include "host/plugin.h"

using namespace stablert;

int main(int argc, char** argv) {
  if (argc != 3) return 2;
  StatusOr<std::shared_ptr<const host::Plugin>> plugin = host::Plugin::Load(argv[1]);
  if (!plugin.ok()) return std::fprintf(stderr, "%s\n", plugin.status().ToString().c_str()), 1;
  StatusOr<std::shared_ptr<host::Client>> client = host::Client::Create(*plugin);
  if (!client.ok()) return std::fprintf(stderr, "%s\n", client.status().ToString().c_str()), 1;

  std::ifstream file(argv[2], std::ios::binary);
  std::stringstream code;
  code << file.rdbuf();
  StatusOr<std::shared_ptr<host::LoadedExecutable>> executable =
      host::LoadedExecutable::Compile(*client, host::Program{code.str()});
  if (!executable.ok()) return std::fprintf(stderr, "%s\n", executable.status().ToString().c_str()), 1;

  int32_t one = 1, two = 2;
  const host::Device& device = (*executable)->devices()[0];
  StatusOr<host::Buffer> x = host::Buffer::FromHost(*client, {PJRT_Buffer_Type_S32, {}, {}, &one}, device);
  StatusOr<host::Buffer> y = host::Buffer::FromHost(*client, {PJRT_Buffer_Type_S32, {}, {}, &two}, device);
  if (!x.ok() || !y.ok()) return 1;
  StatusOr<host::ExecuteResult> result = (*executable)->Execute({{&*x, &*y}});
  if (!result.ok()) return std::fprintf(stderr, "%s\n", result.status().ToString().c_str()), 1;
  if (Status done = result->done[0].Await(); !done.ok()) return 1;
  StatusOr<host::Literal> sum = result->outputs[0][0].ToLiteral();
  if (!sum.ok()) return 1;
  int32_t value;
  std::memcpy(&value, sum->bytes.data(), 4);
  std::printf("%s: 1 + 2 = %d\n", (*client)->platform_name().c_str(), value);
  return 0;
}
