package learn

import (
	"os"
	"path/filepath"
	"strings"

	"github.com/landjail/landjail/internal/refusal"
)

// FromRefusals turns the shared refusal records (internal/refusal: one
// record type for every layer: Landlock's audit, the namespace view's
// EROFS and EACCES, seccomp, the proxy, the path checks) into refusals,
// file-system ones classified by c (nil: only the record's own ByDesign).
//
//   - A record that is ByDesign stays by design (its Rule is the reason),
//     whatever c says; c can only add protections.
//   - Noise records (speculative accesses the program handles: the Go
//     runtime's probes, glibc's optional files) are dropped: granting them
//     would widen the policy for nothing.
//   - Rights: read, write, create, execute, and Landlock's own names
//     (read_file, make_reg, ...; several joined by ","). A create whose
//     path is an existing regular file (an O_CREAT open of it) is a write
//     of that file. Socket, syscall and TCP-port records are not
//     learnable; the proxy's records (Rule "proxy: REASON") are read as
//     FromProxy reads its reasons; a host refused by another layer is not
//     learnable.
func FromRefusals(rs []refusal.Refusal, c Classifier) []Refusal {
	var out []Refusal
	for _, r := range rs {
		if r.Noise {
			continue
		}
		if r.Host != "" || r.Layer == refusal.Proxy {
			// The proxy's records carry its reason as "proxy: REASON".
			x := FromProxy(r.Host, r.Port, strings.TrimPrefix(r.Rule, "proxy: "))
			switch {
			case r.ByDesign:
				x.ByDesign, x.NotLearnable = r.Rule, ""
			case r.Layer != refusal.Proxy:
				x.ByDesign, x.NotLearnable = "", r.Layer.String()+": "+r.Rule
			}
			out = append(out, x)
			continue
		}
		for _, right := range strings.Split(r.Right, ",") {
			x := Refusal{Path: r.Path}
			switch right {
			case refusal.RightRead, "read_file":
				x.Right = Read
			case "read_dir":
				x.Right, x.Dir = Read, true
			case refusal.RightExecute:
				x.Right = Exec
			case refusal.RightWrite, "write_file", "truncate":
				x.Right = Write
			case refusal.RightCreate, "refer":
				x.Right = Create
				if fi, err := os.Lstat(r.Path); err == nil && fi.Mode().IsRegular() {
					x.Right = Write
				}
			default:
				if strings.HasPrefix(right, "make_") || strings.HasPrefix(right, "remove_") {
					x.Right = Create
					break
				}
				if x.Path == "" {
					x.Path = r.Target()
				}
				if x.Path == "" {
					x.Path = r.Layer.String() + " " + right
				}
				x.NotLearnable = r.Rule + " (--learn grants files and --allow-domain hosts only)"
			}
			switch {
			case r.ByDesign:
				x.ByDesign, x.NotLearnable = r.Rule, ""
			case x.NotLearnable == "" && c != nil && filepath.IsAbs(x.Path):
				x.ByDesign, x.NotLearnable = c.Classify(x.Path, x.Right)
			}
			out = append(out, x)
		}
	}
	return out
}
