package denials

import (
	"sort"
	"strconv"
	"strings"
)

// Denial is one distinct access Landlock denied, aggregated over the
// records that share its key (Blockers, Path, Dev, Ino, Addr, Port, OPID).
type Denial struct {
	Domain   string   // Landlock domain id (hex, as printed) of the first record with this key
	Blockers []string // e.g. ["fs.read_file"]; see Blocker for their meaning
	// Filesystem denials (blockers fs.*): the path as the kernel resolved
	// it (absolute, or relative to the mount for a detached tree), the
	// device name and inode number. Empty/0 when absent.
	Path string
	Dev  string
	Ino  uint64
	// Network denials (net.bind_tcp: saddr/src; net.connect_tcp:
	// daddr/dest): the address and TCP port. Port is 0 when absent.
	Addr string
	Port uint16
	// Scope denials (scope.signal, scope.abstract_unix_socket): the target
	// process (opid, ocomm) or the abstract socket name (in Path).
	OPID  int
	OComm string
	// The process that was denied, from the event's SYSCALL record when the
	// kernel emitted one (pid, comm, exe); PID is 0 otherwise.
	PID  int
	Comm string
	Exe  string
	// Count is how many records had this key.
	Count int
}

// key identifies a distinct denial.
func (d Denial) key() string {
	return strings.Join(d.Blockers, ",") + "\x00" + d.Path + "\x00" + d.Dev + "\x00" +
		strconv.FormatUint(d.Ino, 10) + "\x00" + d.Addr + "\x00" + strconv.Itoa(int(d.Port)) +
		"\x00" + strconv.Itoa(d.OPID)
}

// denialFromRecord builds the Denial of one AUDIT_LANDLOCK_ACCESS record;
// syscall, when non-nil, is the SYSCALL record of the same event.
func denialFromRecord(r Record, syscall *Record) Denial {
	f := r.Fields
	d := Denial{Domain: f["domain"], Path: f["path"], Dev: f["dev"], Count: 1}
	if b := f["blockers"]; b != "" {
		d.Blockers = strings.Split(b, ",")
	}
	d.Ino, _ = strconv.ParseUint(f["ino"], 10, 64)
	for _, k := range []string{"daddr", "saddr", "laddr", "faddr"} {
		if v := f[k]; v != "" {
			d.Addr = v
			break
		}
	}
	for _, k := range []string{"dest", "src", "lport", "fport"} {
		if v := f[k]; v != "" {
			p, _ := strconv.ParseUint(v, 10, 16)
			d.Port = uint16(p)
			break
		}
	}
	d.OPID, _ = strconv.Atoi(f["opid"])
	d.OComm = f["ocomm"]
	if syscall != nil {
		d.PID, _ = strconv.Atoi(syscall.Fields["pid"])
		d.Comm, d.Exe = syscall.Fields["comm"], syscall.Fields["exe"]
	}
	return d
}

// Filter selects the records to report.
type Filter struct {
	// CreatorPIDs: a domain is ours when its AUDIT_LANDLOCK_DOMAIN
	// "status=allocated" record names one of these pids (the process, as
	// the kernel prints its tgid, that called landlock_restrict_self). nil
	// or empty accepts every domain.
	CreatorPIDs []int
}

// Dedup turns records (in any order, of any types) into the distinct
// denials of the domains Filter accepts, sorted by blockers then path then
// port. A domain is attributed through its allocation record only; an
// access record whose domain's allocation record is missing (it was
// allocated before collection started, or the record was lost) is dropped
// when Filter.CreatorPIDs is set: fail closed toward "not ours" rather than
// reporting another sandbox's denials. Pure; safe for concurrent use.
func Dedup(records []Record, filter Filter) []Denial {
	creators := map[int]bool{}
	for _, p := range filter.CreatorPIDs {
		creators[p] = true
	}
	ours := map[string]bool{}
	syscalls := map[uint64]*Record{}
	for i := range records {
		r := &records[i]
		switch r.Type {
		case TypeLandlockDomain:
			if r.Fields["status"] == "allocated" {
				pid, err := strconv.Atoi(r.Fields["pid"])
				if err == nil && creators[pid] {
					ours[r.Fields["domain"]] = true
				}
			}
		case typeSyscall:
			syscalls[r.Serial] = r
		}
	}
	byKey := map[string]int{}
	var out []Denial
	for _, r := range records {
		if r.Type != TypeLandlockAccess {
			continue
		}
		if len(creators) > 0 && !ours[r.Fields["domain"]] {
			continue
		}
		d := denialFromRecord(r, syscalls[r.Serial])
		if i, ok := byKey[d.key()]; ok {
			out[i].Count++
			continue
		}
		byKey[d.key()] = len(out)
		out = append(out, d)
	}
	sort.SliceStable(out, func(i, j int) bool {
		a, b := out[i], out[j]
		if x, y := strings.Join(a.Blockers, ","), strings.Join(b.Blockers, ","); x != y {
			return x < y
		}
		if a.Path != b.Path {
			return a.Path < b.Path
		}
		return a.Port < b.Port
	})
	return out
}

// typeSyscall is AUDIT_SYSCALL, emitted with the Landlock records of an
// event when syscall auditing is active.
const typeSyscall = 1300
