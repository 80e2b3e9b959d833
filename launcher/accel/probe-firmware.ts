// The KVM probe's guest: a 64 KiB firmware image (QEMU's `-bios`) that goes from the reset vector
// through protected mode into 64-bit long mode, does a little real work, and reports the result
// on QEMU's isa-debug-exit port, which makes QEMU exit with status (value << 1) | 1.
//
// The work tells hardware-assisted execution apart from instruction emulation:
//  1. if CPUID.(EAX=7,ECX=0):EBX bit 8 (BMI2) is set, one VEX-encoded instruction
//     (`shlx`): KVM's instruction emulator cannot decode VEX, so a "KVM" that emulates guest code
//     stops with `KVM internal error. Suberror: 1` (emulation failure) right there;
//  2. a loop of 2^21 iterations (add, store to memory, dec, jnz: 8 M instructions): a few ms on
//     real hardware and under TCG, seconds for an emulator (measured here: 0.45 µs/instruction).
//
// The bytes are fixed machine code, written out below instruction by instruction (assembled and
// disassembled with GNU as/objdump when written; no assembler is needed at runtime).
// Memory map: image offset X is at physical 0xFFFF0000+X (reset alias) and 0x000F0000+X (the
// legacy BIOS alias, below 1 MiB). The code lives at X = 0xF000.. and runs from the low alias, which
// the identity-mapped first 2 MiB covers once paging is on. Page tables are built in RAM at 0x1000.

/** Exit values the firmware writes to the debug-exit port. */
export const probeExit = {
  /** Loop result right, and the VEX instruction ran and gave the right result. */
  okWithVex: 0x2a,
  /** Loop result right; the CPU reports no BMI2, so the VEX instruction was skipped. */
  okWithoutVex: 0x2b,
  /** The loop computed a wrong sum. */
  badLoop: 0x15,
  /** `shlx` computed a wrong result. */
  badVex: 0x16,
} as const;

/** QEMU's process exit status for a value written to isa-debug-exit. */
export const qemuExitStatus = (value: number): number => ((value << 1) | 1) & 0xff;

/** The I/O port isa-debug-exit listens on (`-device isa-debug-exit,iobase=0xf4,iosize=0x04`). */
export const debugExitPort = 0xf4;

/** Iterations of the timing loop; its sum 1+2+…+N mod 2^32 is checked by the guest. */
export const loopIterations = 0x200000;

const CODE = 0xf000;
const GDT = 0xf0e0;
const GDTR = 0xf100;
const RESET = 0xfff0;

// [offset, bytes, what it does]. Offsets are image offsets; addresses in the code are low-alias
// physical addresses (0xF0000 + offset).
const code: Array<[number, string, string]> = [
  // 16-bit real mode, CS=F000 (base 0xF0000)
  [0xf000, 'fa', 'cli'],
  [0xf001, 'fc', 'cld'],
  [0xf002, '2e 66 0f 01 16 00 f1', 'lgdtl %cs:0xf100 (gdtr)'],
  [0xf009, '0f 20 c0', 'mov %cr0,%eax'],
  [0xf00c, '66 83 c8 01', 'or $1,%eax (PE)'],
  [0xf010, '0f 22 c0', 'mov %eax,%cr0'],
  [0xf013, '66 ea 1b f0 0f 00 08 00', 'ljmpl $0x08,$0xff01b (32-bit code segment)'],
  // 32-bit protected mode, flat segments
  [0xf01b, '66 b8 10 00', 'mov $0x10,%ax (data segment)'],
  [0xf01f, '8e d8', 'mov %eax,%ds'],
  [0xf021, '8e c0', 'mov %eax,%es'],
  [0xf023, '8e d0', 'mov %eax,%ss'],
  [0xf025, 'bf 00 10 00 00', 'mov $0x1000,%edi'],
  [0xf02a, '31 c0', 'xor %eax,%eax'],
  [0xf02c, 'b9 00 0c 00 00', 'mov $0xc00,%ecx'],
  [0xf031, 'f3 ab', 'rep stos %eax,%es:(%edi) (zero 0x1000-0x3fff)'],
  [0xf033, 'c7 05 00 10 00 00 03 20 00 00', 'movl $0x2003,0x1000 (PML4[0] -> PDPT)'],
  [0xf03d, 'c7 05 00 20 00 00 03 30 00 00', 'movl $0x3003,0x2000 (PDPT[0] -> PD)'],
  [0xf047, 'c7 05 00 30 00 00 83 00 00 00', 'movl $0x83,0x3000 (PD[0]: 2 MiB page at 0)'],
  [0xf051, 'b8 00 10 00 00', 'mov $0x1000,%eax'],
  [0xf056, '0f 22 d8', 'mov %eax,%cr3'],
  [0xf059, '0f 20 e0', 'mov %cr4,%eax'],
  [0xf05c, '83 c8 20', 'or $0x20,%eax (PAE)'],
  [0xf05f, '0f 22 e0', 'mov %eax,%cr4'],
  [0xf062, 'b9 80 00 00 c0', 'mov $0xc0000080,%ecx (EFER)'],
  [0xf067, '0f 32', 'rdmsr'],
  [0xf069, '0d 00 01 00 00', 'or $0x100,%eax (LME)'],
  [0xf06e, '0f 30', 'wrmsr'],
  [0xf070, '0f 20 c0', 'mov %cr0,%eax'],
  [0xf073, '0d 00 00 00 80', 'or $0x80000000,%eax (PG)'],
  [0xf078, '0f 22 c0', 'mov %eax,%cr0'],
  [0xf07b, 'ea 82 f0 0f 00 18 00', 'ljmp $0x18,$0xff082 (64-bit code segment)'],
  // 64-bit long mode
  [0xf082, 'bf 2b 00 00 00', 'mov $0x2b,%edi (result: ok, VEX skipped)'],
  [0xf087, 'b8 07 00 00 00', 'mov $7,%eax'],
  [0xf08c, '31 c9', 'xor %ecx,%ecx'],
  [0xf08e, '0f a2', 'cpuid (leaf 7, subleaf 0)'],
  [0xf090, 'f7 c3 00 01 00 00', 'test $0x100,%ebx (BMI2)'],
  [0xf096, '74 1e', 'je 0xf0b6 (no BMI2: skip the VEX instruction)'],
  [0xf098, 'b8 01 00 00 00', 'mov $1,%eax'],
  [0xf09d, 'b9 05 00 00 00', 'mov $5,%ecx'],
  [0xf0a2, 'c4 e2 71 f7 d0', 'shlx %ecx,%eax,%edx (VEX: edx = 1 << 5)'],
  [0xf0a7, 'bf 2a 00 00 00', 'mov $0x2a,%edi (result: ok with VEX)'],
  [0xf0ac, '83 fa 20', 'cmp $32,%edx'],
  [0xf0af, '74 05', 'je 0xf0b6'],
  [0xf0b1, 'bf 16 00 00 00', 'mov $0x16,%edi (result: bad VEX)'],
  [0xf0b6, 'b9 00 00 20 00', 'mov $0x200000,%ecx (loop count)'],
  [0xf0bb, '31 c0', 'xor %eax,%eax'],
  [0xf0bd, '01 c8', 'loop: add %ecx,%eax'],
  [0xf0bf, '89 04 25 00 50 00 00', 'mov %eax,0x5000'],
  [0xf0c6, 'ff c9', 'dec %ecx'],
  [0xf0c8, '75 f3', 'jne loop (0xf0bd)'],
  [0xf0ca, '3d 00 00 10 00', 'cmp $0x100000,%eax (sum 1..2^21 mod 2^32)'],
  [0xf0cf, '74 05', 'je 0xf0d6'],
  [0xf0d1, 'bf 15 00 00 00', 'mov $0x15,%edi (result: bad loop)'],
  [0xf0d6, '89 f8', 'mov %edi,%eax'],
  [0xf0d8, '66 ba f4 00', 'mov $0xf4,%dx (isa-debug-exit)'],
  [0xf0dc, 'ee', 'out %al,(%dx): QEMU exits'],
  [0xf0dd, 'f4', 'hlt'],
  [0xf0de, 'eb fd', 'jmp 0xf0dd'],
  // GDT: null; 0x08 code32; 0x10 data; 0x18 code64. Accessed bits preset: the CPU would otherwise
  // write them into this read-only image on every segment load (a write PVM-style KVM hangs on).
  [GDT + 0x00, '00 00 00 00 00 00 00 00', 'null descriptor'],
  [GDT + 0x08, 'ff ff 00 00 00 9b cf 00', '0x08: 32-bit code, base 0, limit 4 GiB'],
  [GDT + 0x10, 'ff ff 00 00 00 93 cf 00', '0x10: data, base 0, limit 4 GiB'],
  [GDT + 0x18, 'ff ff 00 00 00 9b af 00', '0x18: 64-bit code'],
  [GDTR, '1f 00 e0 f0 0f 00', 'gdtr: limit 31, base 0xff0e0'],
  // Reset vector: 0xFFFFFFF0, CS base 0xFFFF0000
  [RESET, 'ea 00 f0 00 f0', 'ljmp $0xf000,$0xf000'],
];

/** Offset of the `je` that skips the VEX instruction when BMI2 is absent. */
const vexGate = 0xf096;

function hex(bytes: string): number[] {
  return bytes.split(' ').map((b) => Number.parseInt(b, 16));
}

/**
 * The firmware image (64 KiB, QEMU requires a multiple of 64 KiB for -bios).
 * `skipVex` always jumps over the VEX instruction, leaving only the timing loop (for tests).
 */
export function probeFirmware(opts: { skipVex?: boolean } = {}): Uint8Array {
  const image = new Uint8Array(0x10000);
  for (const [offset, bytes] of code) {
    const b = hex(bytes);
    for (let i = 0; i < b.length; i++) {
      if (image[offset + i] !== 0) throw new Error(`probe firmware: overlapping bytes at 0x${(offset + i).toString(16)}`);
      image[offset + i] = b[i]!;
    }
  }
  if (opts.skipVex) image[vexGate] = 0xeb; // je -> jmp
  return image;
}

/** Where each instruction starts and what it is, for tests and for reading the image. */
export function probeListing(): ReadonlyArray<{ offset: number; length: number; text: string }> {
  return code.map(([offset, bytes, text]) => ({ offset, length: hex(bytes).length, text }));
}

export const probeLayout = { code: CODE, gdt: GDT, gdtr: GDTR, reset: RESET, vexGate } as const;
