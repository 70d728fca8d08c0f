package nsview_test

import (
	"fmt"
	"os"
	osexec "os/exec"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/landjail/landjail/internal/nsview"
	"github.com/landjail/landjail/internal/osthread"
)

// benchView is a workspace with 10 masked files (nested at depths 1 to 3)
// and the private /tmp, /dev/shm.
func benchView(b *testing.B) nsview.View {
	ws := filepath.Join(b.TempDir(), "ws")
	v := nsview.New().Writable(ws).PrivateTmp()
	for i := range 10 {
		p := filepath.Join(ws, fmt.Sprintf("d%d/e%d", i%3, i%2), fmt.Sprintf("s%d.env", i))
		require.NoError(b, os.MkdirAll(filepath.Dir(p), 0o755))
		require.NoError(b, os.WriteFile(p, []byte("S"), 0o600))
		v = v.Mask(p)
	}
	return v
}

// BenchmarkEnter: a fresh locked thread per op, without ("thread") and
// with ("view-10-masks") the view; the difference is the view's cost.
func BenchmarkEnter(b *testing.B) {
	skipWithoutViews(b)
	v := benchView(b)
	for _, bc := range []struct {
		name string
		v    *nsview.View
	}{{"thread", nil}, {"view-10-masks", &v}} {
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				err := osthread.Run(func() error {
					if bc.v == nil {
						return nil
					}
					return bc.v.Enter()
				})
				if err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkSpawnTrue: /bin/true started and waited for from one locked
// thread, in the host's namespaces ("plain") or in the view.
func BenchmarkSpawnTrue(b *testing.B) {
	skipWithoutViews(b)
	v := benchView(b)
	for _, bc := range []struct {
		name string
		v    nsview.View
		view bool
	}{{"plain", nsview.View{}, false}, {"view-10-masks", v, true}} {
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			ch := make(chan error, 1)
			osthread.Go(func() {
				if bc.view {
					if err := bc.v.Enter(); err != nil {
						ch <- err
						return
					}
				}
				for b.Loop() {
					if err := osexec.Command("/bin/true").Run(); err != nil {
						ch <- err
						return
					}
				}
				ch <- nil
			})
			if err := <-ch; err != nil {
				b.Fatal(err)
			}
		})
	}
}

func skipWithoutViews(b *testing.B) {
	b.Helper()
	if err := nsview.Probe(); err != nil {
		b.Skipf("mount namespaces unavailable: %v", err)
	}
}
