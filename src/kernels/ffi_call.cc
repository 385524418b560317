// The "ffi_call" kernel: runs a handler registered through XLA's FFI (kernels/ffi_registry.h)
// on the step's buffers.
//
//   "ffi_call"   in: the custom call's operands  out: its results  params: FfiCallParams
//
// Prepare (once per plan step, when a plan is loaded): finds the target's handlers, maps the
// buffers' element types to XLA's numbering, turns the encoded attributes into the
// XLA_FFI_Attrs tree handlers read (sorted by name at every level, as XLA passes them), and
// runs the instantiate stage if the target has one. Each
// call then runs the prepare, initialize (if present) and execute stages on an
// XLA_FFI_CallFrame whose arguments and results are XLA_FFI_Buffers over the step's
// buffers (dtype in XLA's numbering), waiting for the future an asynchronous handler
// returns. A handler's error fails the execution with its code and message, prefixed with
// the target name.
#include <cstring>
#include <deque>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "base/xla_primitive_type.h"
#include "kernels/ffi_api.h"
#include "kernels/ffi_params.h"
#include "kernels/ffi_registry.h"
#include "kernels/registry.h"

namespace stablert::kernels {
namespace {

// An XLA_FFI_Attrs tree with the storage its pointers point into. Immutable once built;
// not movable (the C structures point into it).
class CallAttributes {
 public:
  CallAttributes() = default;
  CallAttributes(const CallAttributes&) = delete;
  CallAttributes& operator=(const CallAttributes&) = delete;

  // Builds the top-level dictionary; `target` names errors.
  Status Build(const FfiAttributes& attributes, const std::string& target) {
    return BuildDictionary(attributes.names, attributes.values, &root_, target, 0);
  }
  const XLA_FFI_Attrs& root() const { return root_; }

 private:
  struct Dictionary {
    std::vector<XLA_FFI_AttrType> types;
    std::vector<XLA_FFI_ByteSpan*> names;
    std::vector<void*> values;
  };

  Status BuildDictionary(const std::vector<std::string>& names, const std::vector<FfiAttribute>& values,
                         XLA_FFI_Attrs* out, const std::string& target, int depth) {
    if (depth > 64) return InvalidArgument("ffi_call '" + target + "': attributes nest too deeply");
    Dictionary& dict = dictionaries_.emplace_back();
    for (size_t i = 0; i < names.size(); ++i) {
      const std::string& name = strings_.emplace_back(names[i]);
      dict.names.push_back(&spans_.emplace_back(XLA_FFI_ByteSpan{name.data(), name.size()}));
      const FfiAttribute& a = values[i];
      switch (a.kind) {
        case FfiAttribute::Kind::kString: {
          const std::string& text = strings_.emplace_back(a.bytes);
          dict.types.push_back(XLA_FFI_AttrType_STRING);
          dict.values.push_back(&spans_.emplace_back(XLA_FFI_ByteSpan{text.data(), text.size()}));
          break;
        }
        case FfiAttribute::Kind::kScalar:
        case FfiAttribute::Kind::kArray: {
          std::optional<int> xla = XlaPrimitiveType(a.dtype);
          const int size = DTypeByteSize(a.dtype);
          if (!xla || size <= 0 || a.bytes.size() % size != 0 ||
              (a.kind == FfiAttribute::Kind::kScalar && a.bytes.size() != static_cast<size_t>(size)))
            return InvalidArgument("ffi_call '" + target + "': attribute '" + names[i] + "' is malformed");
          // 8-byte aligned copies of the element bytes.
          auto& words = words_.emplace_back((a.bytes.size() + 7) / 8 + 1, 0);
          std::memcpy(words.data(), a.bytes.data(), a.bytes.size());
          const auto dtype = static_cast<XLA_FFI_DataType>(*xla);
          if (a.kind == FfiAttribute::Kind::kScalar) {
            dict.types.push_back(XLA_FFI_AttrType_SCALAR);
            dict.values.push_back(&scalars_.emplace_back(XLA_FFI_Scalar{dtype, words.data()}));
          } else {
            dict.types.push_back(XLA_FFI_AttrType_ARRAY);
            dict.values.push_back(&arrays_.emplace_back(XLA_FFI_Array{dtype, a.bytes.size() / size, words.data()}));
          }
          break;
        }
        case FfiAttribute::Kind::kDictionary: {
          XLA_FFI_Attrs& nested = nested_.emplace_back();
          STABLERT_RETURN_IF_ERROR(BuildDictionary(a.names, a.fields, &nested, target, depth + 1));
          dict.types.push_back(XLA_FFI_AttrType_DICTIONARY);
          dict.values.push_back(&nested);
          break;
        }
      }
    }
    *out = XLA_FFI_Attrs{XLA_FFI_Attrs_STRUCT_SIZE, nullptr, static_cast<int64_t>(names.size()), dict.types.data(),
                         dict.names.data(), dict.values.data()};
    return OkStatus();
  }

  // Deques: elements never move once added.
  std::deque<Dictionary> dictionaries_;
  std::deque<std::string> strings_;
  std::deque<XLA_FFI_ByteSpan> spans_;
  std::deque<std::vector<uint64_t>> words_;
  std::deque<XLA_FFI_Scalar> scalars_;
  std::deque<XLA_FFI_Array> arrays_;
  std::deque<XLA_FFI_Attrs> nested_;
  XLA_FFI_Attrs root_{XLA_FFI_Attrs_STRUCT_SIZE, nullptr, 0, nullptr, nullptr, nullptr};
};

// The prepared state of one step.
struct FfiStep {
  std::string target;
  std::string error_prefix;  // "ffi_call 'target'"
  ffi::HandlerBundle handlers;
  CallAttributes attributes;
  // The operands' and results' element types in XLA's numbering, mapped once when the plan
  // is loaded (a step's buffer types never change).
  std::vector<XLA_FFI_DataType> input_types, output_types;
  mutable ffi::StepState state;
};

// XLA_FFI_Buffers over `views` of element types `types`, into `buffers` (dims point into the
// views).
void FillBuffers(std::span<const BufferView> views, const std::vector<XLA_FFI_DataType>& types,
                 std::vector<XLA_FFI_Buffer>& buffers, std::vector<void*>& pointers) {
  for (size_t i = 0; i < views.size(); ++i) {
    const BufferView& view = views[i];
    buffers.push_back(XLA_FFI_Buffer{XLA_FFI_Buffer_STRUCT_SIZE, nullptr,
                                     i < types.size() ? types[i] : XLA_FFI_DataType_INVALID, view.data,
                                     static_cast<int64_t>(view.dims.size()), const_cast<int64_t*>(view.dims.data())});
  }
  for (XLA_FFI_Buffer& buffer : buffers) pointers.push_back(&buffer);
}

// Runs one stage of `step` on `args` (a stage handler must exist).
Status RunStage(const FfiStep& step, XLA_FFI_ExecutionStage stage, void* handler, const KernelArgs& args) {
  std::vector<XLA_FFI_Buffer> in_buffers, out_buffers;
  std::vector<void*> in_pointers, out_pointers;
  in_buffers.reserve(args.inputs.size());
  out_buffers.reserve(args.outputs.size());
  FillBuffers(args.inputs, step.input_types, in_buffers, in_pointers);
  FillBuffers(args.outputs, step.output_types, out_buffers, out_pointers);
  std::vector<XLA_FFI_ArgType> arg_types(in_buffers.size(), XLA_FFI_ArgType_BUFFER);
  std::vector<XLA_FFI_RetType> ret_types(out_buffers.size(), XLA_FFI_RetType_BUFFER);

  XLA_FFI_ExecutionContext context;
  context.state = &step.state;
  context.stage = stage;
  context.execution = ffi::CurrentExecution();
  XLA_FFI_CallFrame frame{};
  frame.struct_size = XLA_FFI_CallFrame_STRUCT_SIZE;
  frame.api = ffi::Api();
  frame.ctx = &context;
  frame.stage = stage;
  frame.args = XLA_FFI_Args{XLA_FFI_Args_STRUCT_SIZE, nullptr, static_cast<int64_t>(in_buffers.size()),
                            arg_types.data(), in_pointers.data()};
  frame.rets = XLA_FFI_Rets{XLA_FFI_Rets_STRUCT_SIZE, nullptr, static_cast<int64_t>(out_buffers.size()),
                            ret_types.data(), out_pointers.data()};
  frame.attrs = step.attributes.root();
  frame.future = nullptr;
  STABLERT_RETURN_IF_ERROR(ffi::TakeError(reinterpret_cast<XLA_FFI_Handler*>(handler)(&frame), step.error_prefix));
  if (XLA_FFI_Future* future = frame.future) {
    XLA_FFI_Error* error;
    {
      std::unique_lock<std::mutex> lock(future->mutex);
      future->done_cv.wait(lock, [&] { return future->done; });
      error = future->error;
    }
    delete future;
    STABLERT_RETURN_IF_ERROR(ffi::TakeError(error, step.error_prefix));
  }
  return OkStatus();
}

StatusOr<PreparedStep> PrepareFfiCall(const KernelArgs& args) {
  const FfiCallParams& params = args.Params<FfiCallParams>();
  auto step = std::make_shared<FfiStep>();
  step->target = params.target;
  step->error_prefix = "ffi_call '" + params.target + "'";
  std::optional<ffi::HandlerBundle> handlers = ffi::FindHandler(params.target);
  if (!handlers)
    return Unimplemented(step->error_prefix + ": no FFI handler is registered for this target on platform 'stablert'");
  step->handlers = *handlers;
  for (const auto& [views, types, what] : {std::tuple{args.inputs, &step->input_types, "operand"},
                                            std::tuple{args.outputs, &step->output_types, "result"}})
    for (const BufferView& view : views) {
      const std::optional<int> xla = XlaPrimitiveType(view.dtype);
      if (!xla)
        return Unimplemented(step->error_prefix + ": " + what + " type " + std::string(DTypeName(view.dtype)) +
                             " has no XLA FFI data type");
      types->push_back(static_cast<XLA_FFI_DataType>(*xla));
    }
  STABLERT_ASSIGN_OR_RETURN(FfiAttributes attributes, DecodeFfiAttributes(params.attributes));
  STABLERT_RETURN_IF_ERROR(step->attributes.Build(attributes, params.target));
  if (step->handlers.instantiate != nullptr)
    STABLERT_RETURN_IF_ERROR(RunStage(*step, XLA_FFI_ExecutionStage_INSTANTIATE, step->handlers.instantiate, args));
  return PreparedStep(std::shared_ptr<const void>(step, step.get()), /*once=*/true);
}

Status FfiCall(const KernelContext&, const KernelArgs& args) {
  const FfiStep& step = *static_cast<const FfiStep*>(args.state);
  if (step.handlers.prepare != nullptr)
    STABLERT_RETURN_IF_ERROR(RunStage(step, XLA_FFI_ExecutionStage_PREPARE, step.handlers.prepare, args));
  if (step.handlers.initialize != nullptr)
    STABLERT_RETURN_IF_ERROR(RunStage(step, XLA_FFI_ExecutionStage_INITIALIZE, step.handlers.initialize, args));
  return RunStage(step, XLA_FFI_ExecutionStage_EXECUTE, step.handlers.execute, args);
}

}  // namespace

Status RegisterFfiKernels(KernelRegistry& registry) {
  return registry.Register<FfiCallParams>("ffi_call", &FfiCall, &PrepareFfiCall);
}

}  // namespace stablert::kernels
