// Command folios reports how the page cache holds each file it is given:
// how many of its pages are cached, and in how many folios (a folio is
// one page or a block of 2^n pages the kernel maps, reclaims and splits
// as one). For .ci/bench and the start-up rounds of issue 25: the same
// landjail binary starts 0.2–0.3 ms later when its text and read-only
// data are cached as 4 KiB folios than as 64 KiB ones (BENCHMARKS.md,
// round 9), and which one a binary gets depends on how it was written (a
// copy's writes make large folios, the linker's mmap small ones) and on
// its age (a copy's large folios are split within minutes here). Two
// binaries timed against each other must be in the same state; this
// shows it.
//
//	go run ./.ci/folios FILE...
//
// One line a file: its pages, the pages cached, the folios holding them
// and the mean pages a folio. Pages not cached are left alone (mincore(2)
// first), so that the report does not read the file in. Needs root:
// /proc/self/pagemap hides page frame numbers from others, and
// /proc/kpageflags (KPF_COMPOUND_HEAD, KPF_COMPOUND_TAIL) is root's.
// Linux only.
package main

import (
	"encoding/binary"
	"fmt"
	"os"
	"unsafe"

	"golang.org/x/sys/unix"
)

// profile is one file's page-cache state.
type profile struct {
	pages  int // the file's pages
	cached int // of them, in the page cache
	folios int // the folios holding the cached pages
	// touched sums the first byte of each cached page, which folios
	// reads to map it, so that the reads are not optimized away.
	touched byte
}

// kpageflags' bits (include/uapi/linux/kernel-page-flags.h).
const (
	kpfCompoundHead = 15
	kpfCompoundTail = 16
)

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: folios FILE...")
		os.Exit(2)
	}
	code := 0
	for _, path := range os.Args[1:] {
		p, err := folios(path)
		if err != nil {
			fmt.Fprintf(os.Stderr, "folios: %s: %v\n", path, err)
			code = 1
			continue
		}
		mean := 0.0
		if p.folios > 0 {
			mean = float64(p.cached) / float64(p.folios)
		}
		fmt.Printf("%s: %d pages, %d cached, %d folios, %.1f pages a folio\n", path, p.pages, p.cached, p.folios, mean)
	}
	os.Exit(code)
}

// folios maps path read-only, touches the pages mincore reports cached
// (mapping them, reading nothing in) and counts their folios through
// the page frames pagemap gives and the flags kpageflags has for them.
func folios(path string) (profile, error) {
	f, err := os.Open(path)
	if err != nil {
		return profile{}, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return profile{}, err
	}
	page := os.Getpagesize()
	size := int(st.Size())
	p := profile{pages: (size + page - 1) / page}
	if size == 0 {
		return p, nil
	}
	m, err := unix.Mmap(int(f.Fd()), 0, size, unix.PROT_READ, unix.MAP_SHARED)
	if err != nil {
		return p, err
	}
	defer unix.Munmap(m)
	vec := make([]byte, p.pages)
	if _, _, e := unix.Syscall(unix.SYS_MINCORE, uintptr(unsafe.Pointer(&m[0])), uintptr(size), uintptr(unsafe.Pointer(&vec[0]))); e != 0 {
		return p, fmt.Errorf("mincore: %w", e)
	}
	pagemap, err := os.Open("/proc/self/pagemap")
	if err != nil {
		return p, err
	}
	defer pagemap.Close()
	kflags, err := os.Open("/proc/kpageflags")
	if err != nil {
		return p, err
	}
	defer kflags.Close()
	base := uintptr(unsafe.Pointer(&m[0])) / uintptr(page)
	buf := make([]byte, 8)
	for i, v := range vec {
		if v&1 == 0 {
			continue
		}
		p.touched += m[i*page] // map it: pagemap reports only mapped pages
		if _, err := pagemap.ReadAt(buf, int64(base+uintptr(i))*8); err != nil {
			return p, fmt.Errorf("pagemap: %w", err)
		}
		e := binary.LittleEndian.Uint64(buf)
		if e>>63&1 == 0 {
			return p, fmt.Errorf("pagemap: page %d not mapped", i)
		}
		pfn := e & (1<<55 - 1)
		if pfn == 0 {
			return p, fmt.Errorf("pagemap: no page frame numbers (root only)")
		}
		if _, err := kflags.ReadAt(buf, int64(pfn)*8); err != nil {
			return p, fmt.Errorf("kpageflags: %w", err)
		}
		fl := binary.LittleEndian.Uint64(buf)
		p.cached++
		if fl>>kpfCompoundTail&1 == 0 { // a head, or a page alone
			p.folios++
		}
	}
	return p, nil
}
