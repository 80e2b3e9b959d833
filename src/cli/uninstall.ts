// `qvirt uninstall`: see install.ts.
export { uninstallMain as main } from './install.ts';
