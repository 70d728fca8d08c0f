package kerneltest

import (
	"fmt"
	"sort"
	"strings"

	"golang.org/x/sys/unix"
)

// emulation maps a feature to the errno its syscalls are made to return.
type emulation map[string]unix.Errno

var errnoByName = map[string]unix.Errno{
	"ENOSYS": unix.ENOSYS,
	"EPERM":  unix.EPERM,
	"EACCES": unix.EACCES,
}

// parseSpec parses a LANDJAIL_EMULATE value. It is pure and tested without
// a kernel. An empty spec is native (an empty, non-nil map).
func parseSpec(spec string) (emulation, error) {
	e := emulation{}
	for _, item := range strings.Split(spec, ",") {
		item = strings.TrimSpace(item)
		if item == "" {
			continue
		}
		feat, name, ok := strings.Cut(item, "=")
		if !ok {
			return nil, fmt.Errorf("item %q is not feature=ERRNO", item)
		}
		errno, ok := errnoByName[strings.ToUpper(strings.TrimSpace(name))]
		if !ok {
			return nil, fmt.Errorf("item %q: errno %q is not one of ENOSYS, EPERM, EACCES", item, name)
		}
		switch feat = strings.ToLower(strings.TrimSpace(feat)); feat {
		case FeatureOpenat2, FeatureLandlock, FeatureNamespaces:
			e[feat] = errno
		case FeatureNSCaps:
			e[FeatureNamespaces] = errno
			e[FeatureNSCaps] = errno
		case "all": // not ns: all=EPERM is a CI mode older than ns
			e[FeatureOpenat2] = errno
			e[FeatureLandlock] = errno
		default:
			return nil, fmt.Errorf("item %q: feature %q is not one of openat2, landlock, ns, nscaps, all", item, feat)
		}
	}
	return e, nil
}

// String returns the canonical form: features sorted, comma-separated.
func (e emulation) String() string {
	var items []string
	for f, errno := range e {
		items = append(items, f+"="+unix.ErrnoName(errno))
	}
	sort.Strings(items)
	return strings.Join(items, ",")
}

func (e emulation) clone() emulation {
	c := emulation{}
	for f, errno := range e {
		c[f] = errno
	}
	return c
}
