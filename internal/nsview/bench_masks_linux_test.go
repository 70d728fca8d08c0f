package nsview

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/landjail/landjail/internal/osthread"
)

// maskTree makes n files matching a deny pattern, 100 per directory
// (dir/dNNN/sN.env), and returns the view that masks them all, with dir
// writable and a private /tmp, as landlock.Compile builds it.
func maskTree(tb testing.TB, dir string, n int) View {
	tb.Helper()
	masks := make([]string, 0, n)
	for i := range n {
		d := filepath.Join(dir, "d"+strconv.Itoa(i/100))
		if i%100 == 0 {
			if err := os.Mkdir(d, 0o755); err != nil {
				tb.Fatal(err)
			}
		}
		p := filepath.Join(d, "s"+strconv.Itoa(i)+".env")
		if err := os.WriteFile(p, nil, 0o600); err != nil {
			tb.Fatal(err)
		}
		masks = append(masks, p)
	}
	return New().Writable(dir).Mask(masks...).PrivateTmp()
}

// BenchmarkMasks: a view masking n files (100 per directory), planned
// (compile, pure) and applied (Enter on a fresh locked thread, the
// namespace torn down when the thread exits). The apply sizes stop below
// fs.mount-max (100,000 by default): 100,000 masks plus their 1,000
// pinned directories do not fit.
func BenchmarkMasks(b *testing.B) {
	for _, n := range []int{1_000, 10_000, 30_000, 100_000} {
		b.Run(fmt.Sprintf("plan/n=%d", n), func(b *testing.B) {
			v := maskTree(b, b.TempDir(), n)
			b.ReportAllocs()
			for b.Loop() {
				if _, err := v.compile(); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
	for _, n := range []int{1_000, 10_000, 30_000, 90_000} {
		b.Run(fmt.Sprintf("apply/n=%d", n), func(b *testing.B) {
			if err := Probe(); err != nil {
				b.Skipf("mount namespaces unavailable: %v", err)
			}
			v := maskTree(b, b.TempDir(), n)
			b.ReportAllocs()
			for b.Loop() {
				if err := osthread.Run(v.Enter); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
