/**
 * The four top-level kubevirt.io/v1 kinds qvirt serves, as schemas (`./kubevirt.ts` nodes plus
 * metadata), with the CEL rules of `./rules.ts` applied.
 */
import type {
  VirtualMachine,
  VirtualMachineInstance,
  VirtualMachineInstanceMigration,
  VirtualMachineInstanceReplicaSet,
} from '../types.ts';
import type { Kind } from '../constants.ts';
import { object, str, type ObjectSchema } from './dsl.ts';
import { ObjectMetaSchema } from './kube.ts';
import {
  VirtualMachineInstanceMigrationSpecSchema,
  VirtualMachineInstanceMigrationStatusSchema,
  VirtualMachineInstanceReplicaSetSpecSchema,
  VirtualMachineInstanceReplicaSetStatusSchema,
  VirtualMachineInstanceSpecSchema,
  VirtualMachineInstanceStatusSchema,
  VirtualMachineSpecSchema,
  VirtualMachineStatusSchema,
} from './kubevirt.ts';
import { withValidationRules } from './rules.ts';

export const VirtualMachineInstanceSchema = withValidationRules(
  'VirtualMachineInstance',
  object<VirtualMachineInstance>()(
    {
      apiVersion: str(),
      kind: str(),
      metadata: ObjectMetaSchema,
      spec: VirtualMachineInstanceSpecSchema,
      status: VirtualMachineInstanceStatusSchema,
    },
    {
      required: ['spec'],
      description:
        'VirtualMachineInstance is *the* VirtualMachineInstance Definition. It represents a virtual machine in the runtime environment of kubernetes.',
    },
  ),
);

export const VirtualMachineSchema = withValidationRules(
  'VirtualMachine',
  object<VirtualMachine>()(
    {
      apiVersion: str(),
      kind: str(),
      metadata: ObjectMetaSchema,
      spec: VirtualMachineSpecSchema,
      status: VirtualMachineStatusSchema,
    },
    {
      required: ['spec'],
      description: 'VirtualMachine handles the VirtualMachines that are not running or are in a stopped state.',
    },
  ),
);

export const VirtualMachineInstanceReplicaSetSchema = withValidationRules(
  'VirtualMachineInstanceReplicaSet',
  object<VirtualMachineInstanceReplicaSet>()(
    {
      apiVersion: str(),
      kind: str(),
      metadata: ObjectMetaSchema,
      spec: VirtualMachineInstanceReplicaSetSpecSchema,
      status: VirtualMachineInstanceReplicaSetStatusSchema,
    },
    {
      required: ['spec'],
      description: 'VirtualMachineInstance is *the* VirtualMachineInstance Definition.',
    },
  ),
);

export const VirtualMachineInstanceMigrationSchema = withValidationRules(
  'VirtualMachineInstanceMigration',
  object<VirtualMachineInstanceMigration>()(
    {
      apiVersion: str(),
      kind: str(),
      metadata: ObjectMetaSchema,
      spec: VirtualMachineInstanceMigrationSpecSchema,
      status: VirtualMachineInstanceMigrationStatusSchema,
    },
    {
      required: ['spec'],
      description: 'VirtualMachineInstanceMigration represents the object tracking a VMI\'s migration to another host in the cluster',
    },
  ),
);

export const SchemaByKind: Readonly<Record<Kind, ObjectSchema>> = {
  VirtualMachineInstance: VirtualMachineInstanceSchema,
  VirtualMachine: VirtualMachineSchema,
  VirtualMachineInstanceReplicaSet: VirtualMachineInstanceReplicaSetSchema,
  VirtualMachineInstanceMigration: VirtualMachineInstanceMigrationSchema,
};
