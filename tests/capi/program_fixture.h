// A client fixture that compiles the test programs (tests/data/programs) through
// PJRT_Client_Compile and runs them on one device.
#pragma once

#include <cstring>
#include <string>
#include <vector>

#include "plugin_fixture.h"

namespace stablert::capi_test {

inline std::string Program(const std::string& name) {
  return ReadFile(std::string(STABLERT_TESTDATA_DIR) + "/programs/" + name + ".mlirbc");
}

class ProgramTest : public ClientTest {
 protected:
  ErrorInfo Compile(const std::string& code, const std::string& options, PJRT_LoadedExecutable** out,
                    const char* format = "mlir") {
    PJRT_Program program{};
    program.struct_size = PJRT_Program_STRUCT_SIZE;
    program.code = const_cast<char*>(code.data());
    program.code_size = code.size();
    program.format = format;
    program.format_size = std::strlen(format);
    PJRT_Client_Compile_Args args{};
    args.struct_size = PJRT_Client_Compile_Args_STRUCT_SIZE;
    args.client = client_;
    args.program = &program;
    args.compile_options = options.data();
    args.compile_options_size = options.size();
    ErrorInfo info = TakeError(api_, api_->PJRT_Client_Compile(&args));
    if (out) *out = info.failed ? nullptr : args.executable;
    else if (!info.failed) Destroy(args.executable);
    return info;
  }

  void Destroy(PJRT_LoadedExecutable* executable) {
    PJRT_LoadedExecutable_Destroy_Args args{PJRT_LoadedExecutable_Destroy_Args_STRUCT_SIZE, nullptr, executable};
    EXPECT_PJRT_OK(api_, api_->PJRT_LoadedExecutable_Destroy(&args));
  }

  // Queues `executable` on one device's argument list; returns the outputs at once, with
  // the device's completion event in `*complete` (the caller destroys it).
  std::vector<PJRT_Buffer*> ExecuteAsync(PJRT_LoadedExecutable* executable, std::vector<PJRT_Buffer*> arguments,
                                         size_t num_outputs, PJRT_Event** complete, ErrorInfo* error = nullptr,
                                         PJRT_ExecuteContext* context = nullptr, int launch_id = 0) {
    std::vector<PJRT_Buffer*> outputs(num_outputs, nullptr);
    PJRT_Buffer* const* argument_list = arguments.data();
    PJRT_Buffer** output_list = outputs.data();
    PJRT_ExecuteOptions options{};
    options.struct_size = PJRT_ExecuteOptions_STRUCT_SIZE;
    options.context = context;
    options.launch_id = launch_id;
    PJRT_LoadedExecutable_Execute_Args args{};
    args.struct_size = PJRT_LoadedExecutable_Execute_Args_STRUCT_SIZE;
    args.executable = executable;
    args.options = &options;
    args.argument_lists = &argument_list;
    args.num_devices = 1;
    args.num_args = arguments.size();
    args.output_lists = &output_list;
    args.device_complete_events = complete;
    ErrorInfo info = TakeError(api_, api_->PJRT_LoadedExecutable_Execute(&args));
    if (error) *error = info;
    else EXPECT_FALSE(info.failed) << info.message;
    if (info.failed) return {};
    return outputs;
  }

  // Runs `executable` on one device's argument list and waits; returns the outputs.
  std::vector<PJRT_Buffer*> Execute(PJRT_LoadedExecutable* executable, std::vector<PJRT_Buffer*> arguments,
                                    size_t num_outputs, ErrorInfo* error = nullptr,
                                    PJRT_ExecuteContext* context = nullptr) {
    PJRT_Event* complete = nullptr;
    std::vector<PJRT_Buffer*> outputs = ExecuteAsync(executable, std::move(arguments), num_outputs, &complete, error,
                                                     context);
    if (complete) AwaitAndDestroy(complete);
    return outputs;
  }
};

}  // namespace stablert::capi_test
