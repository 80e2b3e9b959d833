// VMIs as the create webhook leaves them (defaults applied: machine type, CPU topology and model,
// firmware UUID, default pod network with a bridge interface, disk buses, runtimeUser), modelled on
// KubeVirt's examples/*.yaml — the inputs of the golden launcher pods.
import type { VirtualMachineInstance } from '../../src/api/types.ts';

function base(name: string, uid: string): VirtualMachineInstance {
  return {
    apiVersion: 'kubevirt.io/v1',
    kind: 'VirtualMachineInstance',
    metadata: {
      name,
      namespace: 'default',
      uid,
      labels: { special: name },
      annotations: {
        'kubevirt.io/latest-observed-api-version': 'v1',
        'kubevirt.io/storage-observed-api-version': 'v1',
        'kubectl.kubernetes.io/last-applied-configuration': '{}',
        'example.com/owner': 'team-a',
      },
      finalizers: ['kubevirt.io/foregroundDeleteVirtualMachine'],
    },
    spec: {
      architecture: 'amd64',
      terminationGracePeriodSeconds: 0,
      domain: {
        cpu: { cores: 1, sockets: 1, threads: 1, model: 'host-model' },
        machine: { type: 'q35' },
        memory: { guest: '128Mi' },
        resources: {},
        firmware: { uuid: '5a9fc181-957e-5c32-9e5a-2de5e9673531' },
        features: { acpi: { enabled: true } },
        devices: {
          disks: [{ name: 'containerdisk', disk: { bus: 'virtio' } }],
          interfaces: [{ name: 'default', bridge: {} }],
        },
      },
      networks: [{ name: 'default', pod: {} }],
      volumes: [{ name: 'containerdisk', containerDisk: { image: 'registry:5000/kubevirt/cirros-container-disk-demo:devel', imagePullPolicy: 'IfNotPresent' } }],
    },
    status: { phase: 'Pending', runtimeUser: 107 },
  };
}

export const goldenVMIs: Record<string, VirtualMachineInstance> = {};

// vmi-ephemeral: one container disk
goldenVMIs['ephemeral'] = base('vmi-ephemeral', '11111111-0000-0000-0000-000000000001');

// vmi-nocloud: container disk + cloud-init (inline and from a secret) + empty disk
{
  const v = base('vmi-nocloud', '11111111-0000-0000-0000-000000000002');
  v.spec.domain.devices.disks!.push({ name: 'cloudinitdisk', disk: { bus: 'virtio' } }, { name: 'emptydisk', disk: { bus: 'virtio' } });
  v.spec.volumes!.push(
    { name: 'cloudinitdisk', cloudInitNoCloud: { secretRef: { name: 'my-userdata' }, networkDataSecretRef: { name: 'my-netdata' } } },
    { name: 'emptydisk', emptyDisk: { capacity: '2Gi' } },
  );
  goldenVMIs['nocloud'] = v;
}

// vmi-pvc: a filesystem PVC (RWX: shared path) and a block PVC
{
  const v = base('vmi-pvc', '11111111-0000-0000-0000-000000000003');
  v.spec.domain.devices.disks = [{ name: 'pvcdisk', disk: { bus: 'virtio' } }, { name: 'blockdisk', disk: { bus: 'virtio' } }];
  v.spec.volumes = [
    { name: 'pvcdisk', persistentVolumeClaim: { claimName: 'disk-alpine' } },
    { name: 'blockdisk', persistentVolumeClaim: { claimName: 'disk-block', readOnly: true } },
  ];
  v.spec.domain.memory = { guest: '1Gi' };
  v.spec.domain.resources = { requests: { memory: '1Gi' } };
  goldenVMIs['pvc'] = v;
}

// vmi-host-disk
{
  const v = base('vmi-host-disk', '11111111-0000-0000-0000-000000000004');
  v.spec.domain.devices.disks = [{ name: 'host-disk', disk: { bus: 'virtio' } }];
  v.spec.volumes = [{ name: 'host-disk', hostDisk: { path: '/data/disk.img', type: 'DiskOrCreate', capacity: '1Gi' } }];
  goldenVMIs['host-disk'] = v;
}

// vmi-kernel-boot: kernel + initrd from a container image, no volumes
{
  const v = base('vmi-kernel-boot', '11111111-0000-0000-0000-000000000005');
  v.spec.domain.devices.disks = [];
  v.spec.volumes = [];
  v.spec.domain.firmware!.kernelBoot = {
    kernelArgs: 'console=ttyS0',
    container: { image: 'registry:5000/kubevirt/alpine-ext-kernel-boot-demo:devel', imagePullSecret: 'regcred', kernelPath: '/boot/vmlinuz-virt', initrdPath: '/boot/initramfs-virt', imagePullPolicy: 'IfNotPresent' },
  };
  goldenVMIs['kernel-boot'] = v;
}

// dedicated CPUs: cpumanager node label, guaranteed resources
{
  const v = base('vmi-dedicated', '11111111-0000-0000-0000-000000000006');
  v.spec.domain.cpu = { cores: 2, sockets: 1, threads: 1, model: 'host-model', dedicatedCpuPlacement: true, isolateEmulatorThread: true };
  v.spec.domain.memory = { guest: '1Gi' };
  v.spec.domain.resources = { requests: { memory: '1Gi' } };
  goldenVMIs['dedicated-cpu'] = v;
}

// root (Root feature gate: runtimeUser 0), with a grace period and a named CPU model
{
  const v = base('vmi-root', '11111111-0000-0000-0000-000000000007');
  v.status = { phase: 'Pending', runtimeUser: 0 };
  v.spec.terminationGracePeriodSeconds = 180;
  v.spec.domain.cpu = { cores: 1, sockets: 2, threads: 1, model: 'Haswell-noTSX', features: [{ name: 'vmx', policy: 'require' }, { name: 'pcid', policy: 'forbid' }] };
  goldenVMIs['root-grace'] = v;
}

// masquerade interface with ports, hostname/subdomain, tolerations, probes, no serial log
{
  const v = base('vmi.masquerade.example', '11111111-0000-0000-0000-000000000008');
  v.spec.domain.devices.interfaces = [{ name: 'default', masquerade: {}, ports: [{ name: 'http', port: 80 }, { port: 53, protocol: 'UDP' }] }];
  v.spec.subdomain = 'mysub';
  v.spec.tolerations = [{ key: 'example.com/vm', operator: 'Exists', effect: 'NoSchedule' }];
  v.spec.nodeSelector = { 'topology.kubernetes.io/zone': 'a' };
  v.spec.readinessProbe = { exec: { command: ['cat', '/tmp/healthy'] }, initialDelaySeconds: 5 };
  v.spec.livenessProbe = { guestAgentPing: {}, periodSeconds: 20 };
  v.spec.domain.devices.logSerialConsole = false;
  v.spec.domain.devices.rng = {};
  v.spec.volumes!.push({ name: 'sa', serviceAccount: { serviceAccountName: 'vm-sa' } });
  v.spec.domain.devices.disks!.push({ name: 'sa', disk: { bus: 'virtio' } });
  goldenVMIs['interfaces-ports'] = v;
}

// secret/configMap volumes, access credentials, annotations driving launcher flags
{
  const v = base('vmi-config', '11111111-0000-0000-0000-000000000009');
  v.metadata!.annotations!['kubevirt.io/keep-launcher-alive-after-failure'] = 'true';
  v.metadata!.labels!['logVerbosity'] = '6';
  v.spec.volumes!.push({ name: 'app-secret', secret: { secretName: 'app' } }, { name: 'app-config', configMap: { name: 'app-cm' } }, { name: 'unused-secret', secret: { secretName: 'other' } });
  v.spec.domain.devices.disks!.push({ name: 'app-secret', disk: {} }, { name: 'app-config', disk: {} });
  v.spec.accessCredentials = [{ sshPublicKey: { source: { secret: { secretName: 'my-keys' } }, propagationMethod: { qemuGuestAgent: { users: ['root'] } } } }];
  goldenVMIs['config-volumes'] = v;
}
