package limits

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// Flag names for the front ends. landjail-mcp already has --max-file-size
// (its tools' file size cap), so the run limit is FlagFileSizeMCP there.
const (
	FlagPids        = "pids"            // --pids N|max
	FlagMemory      = "memory"          // --memory SIZE|max
	FlagCPUs        = "cpus"            // --cpus F|max
	FlagFileSize    = "max-file-size"   // --max-file-size SIZE|max (landjail run)
	FlagFileSizeMCP = "limit-file-size" // --limit-file-size SIZE|max (landjail-mcp)
	FlagNoFile      = "nofile"          // --nofile N|max
)

// Flags are the limit flags as typed; "" means not given (the default).
type Flags struct {
	Pids, Memory, CPUs, FileSize, NoFile string
}

// ParseFlags turns flag values into a Spec, starting from DefaultSpec:
// "" keeps the default, "max" (or "0") removes the limit. Pids and NoFile
// are decimal counts, Memory and FileSize sizes (ParseSize), CPUs a decimal
// fraction of CPUs ("0.5", "2"). Errors wrap ErrInvalid and name the flag.
func ParseFlags(f Flags) (Spec, error) {
	s := DefaultSpec()
	var err error
	if s.Pids, err = parseCount(FlagPids, f.Pids, s.Pids); err != nil {
		return Spec{}, err
	}
	nofile, err := parseCount(FlagNoFile, f.NoFile, 0)
	if err != nil {
		return Spec{}, err
	}
	s.NoFile = uint64(nofile)
	if s.Memory, err = parseSizeFlag(FlagMemory, f.Memory); err != nil {
		return Spec{}, err
	}
	if s.FileSize, err = parseSizeFlag(FlagFileSize, f.FileSize); err != nil {
		return Spec{}, err
	}
	if f.CPUs != "" && f.CPUs != "max" {
		c, err := strconv.ParseFloat(f.CPUs, 64)
		if err != nil || math.IsNaN(c) || math.IsInf(c, 0) || c < 0 {
			return Spec{}, fmt.Errorf("limits: --%s %q: want a number of CPUs like 0.5: %w", FlagCPUs, f.CPUs, ErrInvalid)
		}
		s.CPUs = c
	}
	if err := s.Validate(); err != nil {
		return Spec{}, err
	}
	return s, nil
}

func parseCount(flag, v string, def int64) (int64, error) {
	switch v {
	case "":
		return def, nil
	case "max":
		return 0, nil
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil || n < 0 {
		return 0, fmt.Errorf("limits: --%s %q: want a count or max: %w", flag, v, ErrInvalid)
	}
	return n, nil
}

func parseSizeFlag(flag, v string) (int64, error) {
	if v == "" || v == "max" {
		return 0, nil
	}
	n, err := ParseSize(v)
	if err != nil {
		return 0, fmt.Errorf("limits: --%s: %w", flag, err)
	}
	return n, nil
}

// ParseSize parses a size in bytes: a decimal integer with an optional
// binary unit K, M, G or T (1024-based), optionally followed by "i",
// "iB" or "B" and in either case ("64M", "64MiB", "1g", "4096"). Errors
// wrap ErrInvalid (syntax, overflow of int64).
func ParseSize(s string) (int64, error) {
	num := strings.TrimRight(s, "bBiI")
	shift := 0
	if num != "" {
		switch num[len(num)-1] {
		case 'k', 'K':
			shift = 10
		case 'm', 'M':
			shift = 20
		case 'g', 'G':
			shift = 30
		case 't', 'T':
			shift = 40
		}
		if shift > 0 {
			num = num[:len(num)-1]
		}
	}
	// Only "B" may follow a plain number; "i" needs a unit.
	if rest := s[len(num):]; shift == 0 && rest != "" && rest != "b" && rest != "B" {
		return 0, fmt.Errorf("size %q: %w", s, ErrInvalid)
	} else if shift > 0 && len(rest) > 3 {
		return 0, fmt.Errorf("size %q: %w", s, ErrInvalid)
	}
	n, err := strconv.ParseInt(num, 10, 64)
	if err != nil || n < 0 || n > math.MaxInt64>>shift {
		return 0, fmt.Errorf("size %q: %w", s, ErrInvalid)
	}
	return n << shift, nil
}
