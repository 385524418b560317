// Declarations of every PJRT entry point StableRT implements, grouped by object family.
// Each is defined in the <family>_api.cc file of this folder; api_table.cc puts them into
// the PJRT_Api table. Entry points never throw and never abort on bad input: misuse comes
// back as a PJRT_Error naming the function.
#pragma once

#include <memory>

#include "runtime/client.h"
#include "xla/pjrt/c/pjrt_c_api.h"

namespace stablert::capi {

// Builds the client-owned device, memory and topology handles around a runtime client.
PJRT_Client* WrapClient(std::unique_ptr<runtime::Client> client);

#define STABLERT_DECLARE_ENTRY(name) PJRT_Error* name(name##_Args* args);
#define STABLERT_IMPLEMENTED_ENTRIES(X)                                                         \
  X(PJRT_Plugin_Initialize) X(PJRT_Plugin_Attributes)                                           \
  X(PJRT_Event_Destroy) X(PJRT_Event_IsReady) X(PJRT_Event_Error) X(PJRT_Event_Await)          \
  X(PJRT_Event_OnReady) X(PJRT_Event_Create) X(PJRT_Event_Set)                                  \
  X(PJRT_Client_Create) X(PJRT_Client_Destroy) X(PJRT_Client_PlatformName)                     \
  X(PJRT_Client_UpdateGlobalProcessInfo)                                                        \
  X(PJRT_Client_ProcessIndex) X(PJRT_Client_PlatformVersion) X(PJRT_Client_Devices)             \
  X(PJRT_Client_AddressableDevices) X(PJRT_Client_LookupDevice)                                 \
  X(PJRT_Client_LookupAddressableDevice) X(PJRT_Client_AddressableMemories)                     \
  X(PJRT_Client_Compile) X(PJRT_Client_DefaultDeviceAssignment)                                 \
  X(PJRT_Client_BufferFromHostBuffer) X(PJRT_Client_TopologyDescription)                        \
  X(PJRT_Client_CreateUninitializedBuffer) X(PJRT_Client_CreateErrorBuffer)                     \
  X(PJRT_Client_CreateViewOfDeviceBuffer) X(PJRT_Client_Load)                                   \
  X(PJRT_DeviceDescription_Id) X(PJRT_DeviceDescription_ProcessIndex)                           \
  X(PJRT_DeviceDescription_Attributes) X(PJRT_DeviceDescription_Kind)                           \
  X(PJRT_DeviceDescription_DebugString) X(PJRT_DeviceDescription_ToString)                      \
  X(PJRT_Device_GetDescription) X(PJRT_Device_IsAddressable) X(PJRT_Device_LocalHardwareId)    \
  X(PJRT_Device_AddressableMemories) X(PJRT_Device_DefaultMemory) X(PJRT_Device_MemoryStats)   \
  X(PJRT_Device_GetAttributes) X(PJRT_Device_ClearMemoryStats)                                  \
  X(PJRT_Memory_Id) X(PJRT_Memory_Kind) X(PJRT_Memory_Kind_Id) X(PJRT_Memory_DebugString)      \
  X(PJRT_Memory_ToString) X(PJRT_Memory_AddressableByDevices)                                   \
  X(PJRT_Executable_Destroy) X(PJRT_Executable_Name) X(PJRT_Executable_NumReplicas)            \
  X(PJRT_Executable_NumPartitions) X(PJRT_Executable_NumOutputs)                                \
  X(PJRT_Executable_SizeOfGeneratedCodeInBytes) X(PJRT_Executable_GetCostAnalysis)              \
  X(PJRT_Executable_OutputMemoryKinds) X(PJRT_Executable_ParameterMemoryKinds)                  \
  X(PJRT_Executable_OptimizedProgram) X(PJRT_Executable_Serialize)                              \
  X(PJRT_Executable_DeserializeAndLoad) X(PJRT_Executable_OutputElementTypes)                   \
  X(PJRT_Executable_OutputDimensions) X(PJRT_Executable_Fingerprint)                            \
  X(PJRT_Executable_GetCompiledMemoryStats) X(PJRT_Executable_GetCompileOptions)                \
  X(PJRT_LoadedExecutable_Destroy) X(PJRT_LoadedExecutable_GetExecutable)                       \
  X(PJRT_LoadedExecutable_AddressableDevices) X(PJRT_LoadedExecutable_Delete)                   \
  X(PJRT_LoadedExecutable_IsDeleted) X(PJRT_LoadedExecutable_Execute)                           \
  X(PJRT_LoadedExecutable_Fingerprint) X(PJRT_LoadedExecutable_GetDeviceAssignment)             \
  X(PJRT_LoadedExecutable_AddressableDeviceLogicalIds)                                          \
  X(PJRT_Buffer_Destroy) X(PJRT_Buffer_ElementType) X(PJRT_Buffer_Dimensions)                  \
  X(PJRT_Buffer_UnpaddedDimensions) X(PJRT_Buffer_DynamicDimensionIndices)                      \
  X(PJRT_Buffer_GetMemoryLayout) X(PJRT_Buffer_OnDeviceSizeInBytes) X(PJRT_Buffer_Device)      \
  X(PJRT_Buffer_Memory) X(PJRT_Buffer_Delete) X(PJRT_Buffer_IsDeleted)                          \
  X(PJRT_Buffer_CopyToDevice) X(PJRT_Buffer_CopyToMemory) X(PJRT_Buffer_ToHostBuffer)          \
  X(PJRT_Buffer_IsOnCpu) X(PJRT_Buffer_ReadyEvent) X(PJRT_Buffer_UnsafePointer)                \
  X(PJRT_Buffer_IncreaseExternalReferenceCount) X(PJRT_Buffer_DecreaseExternalReferenceCount)  \
  X(PJRT_Buffer_OpaqueDeviceMemoryDataPointer) X(PJRT_Buffer_CopyRawToHost)                     \
  X(PJRT_Buffer_CopyRawToHostFuture)                                                            \
  X(PJRT_TopologyDescription_Create) X(PJRT_TopologyDescription_Destroy)                        \
  X(PJRT_TopologyDescription_PlatformName) X(PJRT_TopologyDescription_PlatformVersion)          \
  X(PJRT_TopologyDescription_GetDeviceDescriptions) X(PJRT_TopologyDescription_Serialize)       \
  X(PJRT_TopologyDescription_Attributes) X(PJRT_TopologyDescription_Fingerprint)                \
  X(PJRT_TopologyDescription_Deserialize) X(PJRT_TopologyDescription_GetMemorySpaceKindIds)     \
  X(PJRT_TopologyDescription_MakeCanonicalShapeForMemorySpace) X(PJRT_Compile)                  \
  X(PJRT_Buffer_Bitcast) X(PJRT_Buffer_DonateWithControlDependency)                             \
  X(PJRT_Client_DmaMap) X(PJRT_Client_DmaUnmap) X(PJRT_Device_CreateAsyncTrackingEvent)         \
  X(PJRT_AsyncTrackingEvent_Destroy) X(PJRT_ExecuteContext_Create) X(PJRT_ExecuteContext_Destroy) \
  X(PJRT_Device_PoisonExecution) X(PJRT_Client_CreateAliasBuffer) X(PJRT_Client_FulfillAliasBuffer) \
  X(PJRT_CopyToDeviceStream_Destroy) X(PJRT_CopyToDeviceStream_AddChunk)                        \
  X(PJRT_CopyToDeviceStream_TotalBytes) X(PJRT_CopyToDeviceStream_GranuleSize)                  \
  X(PJRT_CopyToDeviceStream_CurrentBytes)                                                       \
  X(PJRT_Client_CreateBuffersForAsyncHostToDevice)                                              \
  X(PJRT_AsyncHostToDeviceTransferManager_Destroy)                                              \
  X(PJRT_AsyncHostToDeviceTransferManager_TransferData)                                         \
  X(PJRT_AsyncHostToDeviceTransferManager_TransferLiteral)                                      \
  X(PJRT_AsyncHostToDeviceTransferManager_RetrieveBuffer)                                       \
  X(PJRT_AsyncHostToDeviceTransferManager_Device)                                               \
  X(PJRT_AsyncHostToDeviceTransferManager_BufferCount)                                          \
  X(PJRT_AsyncHostToDeviceTransferManager_BufferSize)                                           \
  X(PJRT_AsyncHostToDeviceTransferManager_SetBufferError)                                       \
  X(PJRT_AsyncHostToDeviceTransferManager_AddMetadata)

STABLERT_IMPLEMENTED_ENTRIES(STABLERT_DECLARE_ENTRY)

}  // namespace stablert::capi
