// Kubelet's device-plugin API v1beta1 (deviceplugin.proto): the typed messages, the Registration
// client a plugin uses to announce itself, and the DevicePlugin service a plugin serves. ListAndWatch
// is server-streaming, so the plugin side registers its handlers with grpc-js directly.
import { loadService, type CallOptions } from './service.ts';
import { UnaryClient } from './grpc.ts';

/** The API version a plugin registers with (`pluginapi.Version`). */
export const DEVICE_PLUGIN_API_VERSION = 'v1beta1';
/** Where the kubelet expects plugin sockets (`pluginapi.DevicePluginPath`). */
export const DEVICE_PLUGIN_PATH = '/var/lib/kubelet/device-plugins';
/** The kubelet's Registration socket, inside the device-plugins dir (`pluginapi.KubeletSocket`). */
export const KUBELET_SOCKET_NAME = 'kubelet.sock';

export const DeviceHealth = { Healthy: 'Healthy', Unhealthy: 'Unhealthy' } as const;
export type DeviceHealth = (typeof DeviceHealth)[keyof typeof DeviceHealth];

export interface Empty { }
export interface DevicePluginOptions { pre_start_required: boolean; get_preferred_allocation_available: boolean }
export interface RegisterRequest { version: string; endpoint: string; resource_name: string; options?: DevicePluginOptions | null }
export interface Device { ID: string; health: DeviceHealth | string; topology?: { nodes: { ID: number }[] } | null }
export interface ListAndWatchResponse { devices: Device[] }
export interface ContainerAllocateRequest { devices_ids: string[] }
export interface AllocateRequest { container_requests: ContainerAllocateRequest[] }
export interface DeviceSpec { container_path: string; host_path: string; permissions: string }
export interface Mount { container_path: string; host_path: string; read_only: boolean }
export interface ContainerAllocateResponse { envs: Record<string, string>; mounts: Mount[]; devices: DeviceSpec[]; annotations: Record<string, string>; cdi_devices?: { name: string }[] }
export interface AllocateResponse { container_responses: ContainerAllocateResponse[] }
export interface PreStartContainerRequest { devices_ids: string[] }
export interface PreferredAllocationRequest { container_requests: { available_deviceIDs: string[]; must_include_deviceIDs: string[]; allocation_size: number }[] }
export interface PreferredAllocationResponse { container_responses: { deviceIDs: string[] }[] }

export type RegistrationMethods = { Register: [RegisterRequest, Empty] };

export const REGISTRATION_SERVICE_NAME = 'v1beta1.Registration';
export const DEVICE_PLUGIN_SERVICE_NAME = 'v1beta1.DevicePlugin';
export function registrationService() { return loadService('deviceplugin.proto', REGISTRATION_SERVICE_NAME); }
export function devicePluginService() { return loadService('deviceplugin.proto', DEVICE_PLUGIN_SERVICE_NAME); }

/** The kubelet's Registration service, as a plugin calls it. */
export class RegistrationClient {
  readonly rpc: UnaryClient<RegistrationMethods>;
  constructor(kubeletSocket: string, opts: { timeoutMs?: number } = {}) {
    this.rpc = new UnaryClient<RegistrationMethods>(registrationService(), kubeletSocket, opts);
  }
  register(req: RegisterRequest, opts?: CallOptions): Promise<Empty> {
    return this.rpc.call('Register', req, opts);
  }
  close(): void { this.rpc.close(); }
}
