#!/usr/bin/env python3
"""Atomic read-modify-writes a callgrind profile executed per statement.

    scripts/atomics-per-stmt.py CALLGRIND_OUT BINARY STATEMENTS [TOP]

The profile must be recorded with `--dump-instr=yes` (scripts/bench-instructions.sh does). The
binary's lock-prefixed instructions (and `xchg` with memory, locked implicitly) are found with
objdump; their execution counts in the profile are summed. callgrind counts such an instruction
as one, but on x86 each is a full barrier costing about twenty cycles: reference counts, lock
acquisitions and releases, shared counters. With TOP, the TOP source lines with the most (as
`addr2line` names them; the binary needs line tables for useful names).
"""
import collections
import re
import subprocess
import sys


def executions(path):
    """Instruction address -> executions, from a callgrind profile with per-instruction costs."""
    counts = collections.Counter()
    last = 0
    after_calls = False
    with open(path) as f:
        for line in f:
            if line.startswith("calls="):
                after_calls = True
                continue
            if not line or line[0] not in "0123456789+-*":
                continue
            parts = line.split()
            a = parts[0]
            # Absolute positions are hexadecimal (`0x…`); relative ones (`+N`, `-N`) decimal.
            if a.startswith("0x"):
                addr = int(a, 16)
            elif a.startswith("+"):
                addr = last + int(a[1:], 0)
            elif a.startswith("-"):
                addr = last - int(a[1:], 0)
            else:
                addr = last
            last = addr
            # The line after `calls=` is the call's inclusive cost, not an execution count.
            if after_calls:
                after_calls = False
                continue
            if len(parts) >= 3:
                counts[addr] += int(parts[-1])
    return counts


def locked_instructions(binary):
    """Addresses of the binary's instructions that are atomic read-modify-writes."""
    out = set()
    dump = subprocess.Popen(["objdump", "-d", "--no-show-raw-insn", binary], stdout=subprocess.PIPE, text=True)
    insn = re.compile(r"^\s*([0-9a-f]+):\s+(\S+)\s*(.*)$")
    for line in dump.stdout:
        if "lock" not in line and "xchg" not in line:
            continue
        m = insn.match(line)
        if m and (m.group(2) == "lock" or (m.group(2).startswith("xchg") and "(" in m.group(3))):
            out.add(int(m.group(1), 16))
    dump.wait()
    return out


def main():
    path, binary, statements = sys.argv[1], sys.argv[2], int(sys.argv[3])
    top = int(sys.argv[4]) if len(sys.argv) > 4 else 0
    counts = executions(path)
    locked = sorted(a for a in locked_instructions(binary) if counts.get(a))
    print(f"{sum(counts[a] for a in locked) / statements:.1f}")
    if top:
        out = subprocess.run(
            ["addr2line", "-e", binary, "-i", "-a"] + [hex(a) for a in locked], capture_output=True, text=True
        ).stdout
        by_line = collections.Counter()
        # Per address: its line, then the lines it was inlined into; the first outside the
        # standard library names it.
        for a, block in zip(locked, re.split(r"^0x[0-9a-f]+\n", out, flags=re.M)[1:]):
            lines = block.split()
            by_line[next((l for l in lines if "/rustc/" not in l), lines[0] if lines else hex(a))] += counts[a]
        for where, n in by_line.most_common(top):
            print(f"  {n / statements:6.2f}  {re.sub(r'^.*/registry/src/[^/]+/', '', where)}")

if __name__ == "__main__":
    main()
