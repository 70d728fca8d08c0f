package nsview_test

import (
	"fmt"
	"os"
	osexec "os/exec"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/landjail/landjail/internal/nsview"
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
				ch := make(chan error, 1)
				go func() {
					runtime.LockOSThread() // never unlocked: the thread dies
					if bc.v == nil {
						ch <- nil
						return
					}
					ch <- bc.v.Enter()
				}()
				if err := <-ch; err != nil {
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
			go func() {
				runtime.LockOSThread() // never unlocked: the thread dies
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
			}()
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
