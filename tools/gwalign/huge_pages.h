// Transparent huge pages for the CLI's heap, by re-executing itself with glibc's malloc tunable.
//
// Why: every large buffer gwalign allocates (plans, gradients, distance blocks) is touched for the
// first time once per solve, and the kernel maps it one 4 KiB page at a time. On virtual machines
// a page fault can cost 10 us or more (12.4 us measured on the 2-core AMD EPYC VM of
// bench/RESULTS.md: 330 MB/s of first touch), so a 400 x 500 exact solve spent a third of its time
// faulting. With glibc's `glibc.malloc.hugetlb=1` tunable (glibc 2.35+), malloc asks for
// transparent huge pages (madvise(MADV_HUGEPAGE)) on its large chunks and heaps, and the same
// memory arrives 2 MiB at a time; three more malloc tunables (huge_pages.cpp says which and why)
// serve chunks up to 32 MiB from those heaps and keep freed memory for reuse. glibc reads
// tunables only from the environment at process start, so the CLI sets the variable and
// re-executes /proc/self/exe once, before anything else runs (a few milliseconds). A tunable the
// user already set in GLIBC_TUNABLES keeps the user's value.
//
// Nothing happens when: GWALIGN_HUGE_PAGES=0; GLIBC_TUNABLES already names glibc.malloc.hugetlb
// (the user's choice, or this process after its re-exec); glibc is older than 2.35; the kernel's
// /sys/kernel/mm/transparent_hugepage/enabled is [never] or unreadable; or the exec fails (the
// process then carries on as it is). Library users (C++, Python) set GLIBC_TUNABLES themselves.
#pragma once

namespace gw::cli {

// Call first in main(); returns only when the process was not re-executed.
void reexec_with_huge_pages(char** argv);

// Whether this process's malloc uses transparent huge pages (the tunable is set).
bool malloc_uses_huge_pages();

}  // namespace gw::cli
