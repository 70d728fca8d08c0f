package landlock

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/landjail/landjail/jail"
)

// BenchmarkPlanMasks: Compile's planning of a workspace where n files
// match --deny-secrets' "*.env" (100 per directory, each next to a file
// that matches nothing): the pattern walk and plan, with the namespace
// layer (n masks) and without it (n Landlock carve-outs, a rule for each
// sibling). No kernel is touched: the view is not entered (nsview's
// BenchmarkMasks measures that) and the mount budget is not checked.
func BenchmarkPlanMasks(b *testing.B) {
	for _, n := range []int{1_000, 10_000, 100_000} {
		dir := b.TempDir()
		built := false
		for _, ns := range []bool{true, false} {
			layer := LayerNamespaces
			if !ns {
				layer = LayerLandlockOnly
			}
			b.Run(fmt.Sprintf("%s/n=%d", layer, n), func(b *testing.B) {
				if !built {
					envTree(b, dir, n)
					built = true
				}
				ws, err := jail.New(dir, jail.WithDenySecrets())
				if err != nil {
					b.Fatal(err)
				}
				defer ws.Close()
				b.ReportAllocs()
				for b.Loop() {
					req, err := newRequest(ws, Options{Namespaces: ns, System: true})
					if err != nil {
						b.Fatal(err)
					}
					c, err := plan(req, 7, statPath, listDir)
					if err != nil {
						b.Fatal(err)
					}
					if got := len(c.report.Masks) + len(c.report.CarveOuts); got != n || c.report.Layer != layer {
						b.Fatalf("%s: %d masks and carve-outs, want %d", c.report.Layer, got, n)
					}
				}
			})
		}
	}
}

// envTree makes n files matching "*.env" in dir, 100 per directory
// (dNNN/sN.env), each with a sibling that matches nothing (gN.txt).
func envTree(tb testing.TB, dir string, n int) {
	tb.Helper()
	for i := range n {
		d := filepath.Join(dir, "d"+strconv.Itoa(i/100))
		if i%100 == 0 {
			if err := os.Mkdir(d, 0o755); err != nil {
				tb.Fatal(err)
			}
		}
		for _, name := range []string{"s" + strconv.Itoa(i) + ".env", "g" + strconv.Itoa(i) + ".txt"} {
			if err := os.WriteFile(filepath.Join(d, name), nil, 0o644); err != nil {
				tb.Fatal(err)
			}
		}
	}
}
