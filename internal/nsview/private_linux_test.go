package nsview_test

import (
	"os"
	osexec "os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/landjail/landjail/internal/listentest"
	"github.com/landjail/landjail/internal/nsview"
)

// TestViewPrivateTmp: /tmp and /dev/shm are fresh in the view, the host's
// are invisible and untouched, and a workspace that lives under the host's
// /tmp (t.TempDir) is re-attached inside the fresh /tmp with its masks.
func TestViewPrivateTmp(t *testing.T) {
	requireViews(t)
	marker, err := os.CreateTemp("/tmp", "nsview-marker-")
	require.NoError(t, err)
	_, err = marker.WriteString("MARK")
	require.NoError(t, err)
	require.NoError(t, marker.Close())
	t.Cleanup(func() { os.Remove(marker.Name()) })
	shmName := "/dev/shm/nsview-test-" + filepath.Base(marker.Name())
	tmpName := marker.Name() + "-x"
	t.Cleanup(func() { os.Remove(shmName) })
	python, _ := osexec.LookPath("python3")

	for _, tc := range []viewCase{
		{name: "host /tmp file invisible", argv: []string{"read", "$MARKER"}, view: "ENOENT", control: "MARK"},
		{name: "/tmp holds only the way to the workspace", argv: []string{"readdir", "/tmp"}, view: "$TOP"},
		{name: "/tmp is sticky 1777", argv: []string{"mode", "/tmp"}, view: "1777"},
		{name: "/tmp writable", argv: []string{"create", "$TMPX"}, view: "ok", control: "ok"},
		{name: "/dev/shm writable and private", argv: []string{"create", "$SHM"}, view: "ok", control: "ok"},
		{name: "/dev/shm is sticky 1777", argv: []string{"mode", "/dev/shm"}, view: "1777"},
		{name: "masked file under private /tmp", argv: []string{"read", ".env"}, view: "", control: "SECRET"},
		{name: "touch NEW in workspace under private /tmp", argv: []string{"sh", "touch NEW && echo ok"}, view: "ok", control: "ok",
			host: hostHas("NEW", "")},
		{name: "outside under host /tmp invisible", argv: []string{"read", "$OUT/prog"}, view: "ENOENT", control: "OUT"},
		{name: "python multiprocessing semaphore", argv: []string{"sh", python + ` -c 'import multiprocessing as m; m.Lock(); print("ok")'`}, view: "ok", control: "ok"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if strings.Contains(tc.argv[len(tc.argv)-1], "multiprocessing") && python == "" {
				t.Skip("no python3 on this machine")
			}
			tr := newTree(t)
			vars := map[string]string{"$MARKER": marker.Name(), "$SHM": shmName, "$TMPX": tmpName}
			top := strings.Split(strings.TrimPrefix(tr.ws, "/tmp/"), "/")[0]
			var got string
			require.NoError(t, inView(tr.view().PrivateTmp(), func() (err error) {
				got, err = tr.run(tc.argv, vars)
				return err
			}))
			assert.Equal(t, strings.ReplaceAll(tc.view, "$TOP", top), got, "in the view")
			tr.checkHost(t)
			if tc.host != nil {
				tc.host(t, tr)
			}
			_, err := os.Stat(shmName)
			assert.ErrorIs(t, err, os.ErrNotExist, "host /dev/shm touched")
			_, err = os.Stat(tmpName)
			assert.ErrorIs(t, err, os.ErrNotExist, "host /tmp touched")
			if tc.control == "" {
				return
			}
			ctl := newTree(t)
			got, err = ctl.run(tc.argv, vars)
			require.NoError(t, err)
			assert.Equal(t, tc.control, got, "control (no view)")
			os.Remove(shmName)
			os.Remove(tmpName)
		})
	}
}

// TestViewNoNetwork: with NoNetwork the child cannot reach a loopback
// listener of the test process and sees only its own "lo", up; without it
// (the control) the same child connects.
func TestViewNoNetwork(t *testing.T) {
	requireViews(t)
	ln := listentest.Listen(t, "tcp", "127.0.0.1:0")
	vars := map[string]string{"$ADDR": ln.Addr().String()}
	for _, tc := range []struct {
		name string
		view nsview.View
		argv []string
		want string
	}{
		{"dial host loopback, no network", nsview.New().NoNetwork(), []string{"dial", "$ADDR"}, "ECONNREFUSED"},
		{"dial host loopback, network kept", nsview.New(), []string{"dial", "$ADDR"}, "ok"},
		{"only lo, up", nsview.New().NoNetwork(), []string{"ifaces"}, "lo:up"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tr := newTree(t)
			var got string
			require.NoError(t, inView(tc.view.Writable(tr.ws), func() (err error) {
				got, err = tr.run(tc.argv, vars)
				return err
			}))
			assert.Equal(t, tc.want, got)
		})
	}
	// Control: from a plain child the listener answers.
	got, err := newTree(t).run([]string{"dial", "$ADDR"}, vars)
	require.NoError(t, err)
	assert.Equal(t, "ok", got)
}
