package jail_test

import (
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/landjail/landjail/jail"
)

// belowKeyPolicies are the policies TestBelowKeySound draws names
// against: tail patterns, anchored ones with and without "**", a
// re-inclusion of several components, editor copies, read-only paths,
// the presets.
var belowKeyPolicies = []struct {
	name string
	opts func(root string) []jail.Option
}{
	{"tail", func(string) []jail.Option {
		return []jail.Option{jail.WithDeny("**/loop/prod/secret.txt", "*.key", ".env")}
	}},
	{"anchored", func(string) []jail.Option {
		return []jail.Option{jail.WithDeny("config/prod/secret.txt", "config/*/x/secret.txt", "config/loop/loop/secret.txt")}
	}},
	{"doublestar", func(string) []jail.Option {
		return []jail.Option{jail.WithDeny("config/**/prod/secret.txt", "**/x/**/secret.txt")}
	}},
	{"reinclusion", func(string) []jail.Option {
		return []jail.Option{jail.WithDeny("**/prod/", "!config/loop/prod/", "!**/x/prod/secret.txt")}
	}},
	{"read-only", func(root string) []jail.Option {
		return []jail.Option{jail.WithReadOnly("config/*/run.sh", filepath.Join(root, "config/loop/x/run.sh")), jail.WithDeny("prod.bak/")}
	}},
	{"presets", func(string) []jail.Option {
		return []jail.Option{jail.WithDenySecrets(), jail.WithProtectedAgentConfig(), jail.WithDeny("config/prod/")}
	}},
}

// TestBelowKeySound draws names below a workspace from a small alphabet
// (a loop's name, pattern components, editor copies) and checks, for
// every pair with the same key, that every path below them with the same
// rest gets the same Narrowing and NameNarrowing: what a walk by one name
// finds is what it would find by the other. Control: at least one pair
// with different Narrowing for the same rest has different keys (the
// check can fail), and a loop's names collapse under tail patterns alone.
func TestBelowKeySound(t *testing.T) {
	root, err := filepath.EvalSymlinks(t.TempDir())
	require.NoError(t, err)
	require.NoError(t, os.MkdirAll(filepath.Join(root, "config/loop/x"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(root, "config/loop/x/run.sh"), nil, 0o644))
	alphabet := []string{"loop", "prod", "x", "config", "prod.bak", ".kube", "a~", "conf.d", "config~", "prod.orig"}
	rests := []string{"secret.txt", "run.sh", "config", "prod/secret.txt", "x/secret.txt", "loop/prod/secret.txt",
		"x/prod/secret.txt", "a.key", ".env", "prod.bak/secret.txt", "loop/x/run.sh", "x/run.sh", "prod/run.sh"}
	for _, pol := range belowKeyPolicies {
		t.Run(pol.name, func(t *testing.T) {
			ws, err := jail.New(root, pol.opts(root)...)
			require.NoError(t, err)
			defer ws.Close()
			rng := rand.New(rand.NewPCG(1, uint64(len(pol.name))))
			byKey := map[string][]string{}
			for range 3000 {
				n := 1 + rng.IntN(6)
				var comps []string
				for range n {
					comps = append(comps, alphabet[rng.IntN(len(alphabet))])
				}
				v := filepath.Join(root, filepath.Join(comps...))
				if ws.Narrowing(v)&(jail.NarrowDenied|jail.NarrowReadOnly) != 0 {
					continue // the walk does not go below a verdict
				}
				for _, byName := range []bool{false, true} {
					k := ws.BelowKey(v, byName)
					if byName {
						k = "name\x00" + k
					}
					byKey[k] = append(byKey[k], v)
				}
			}
			shared, differ := 0, 0
			for k, vs := range byKey {
				byName := strings.HasPrefix(k, "name\x00")
				narrow := ws.Narrowing
				if byName {
					narrow = ws.NameNarrowing
				}
				for _, u := range vs[1:] {
					shared++
					for _, r := range rests {
						require.Equal(t, narrow(filepath.Join(vs[0], r)), narrow(filepath.Join(u, r)),
							"%s and %s share a key (byName %v) but differ at %s", vs[0], u, byName, r)
					}
				}
			}
			// The key tells apart what differs: some names with
			// different verdicts below were met, under other keys.
			for k1, vs1 := range byKey {
				for k2, vs2 := range byKey {
					if k1 != k2 && !strings.HasPrefix(k1, "name") && !strings.HasPrefix(k2, "name") {
						for _, r := range rests {
							if ws.Narrowing(filepath.Join(vs1[0], r)) != ws.Narrowing(filepath.Join(vs2[0], r)) {
								differ++
								break
							}
						}
					}
					if differ > 0 {
						break
					}
				}
				if differ > 0 {
					break
				}
			}
			assert.Positive(t, shared, "no two names shared a key: the walk would never be spared")
			assert.Positive(t, differ)
		})
	}
	t.Run("a loop collapses", func(t *testing.T) {
		ws, err := jail.New(root, jail.WithDenySecrets(), jail.WithDeny("config/**/prod/secret.txt"))
		require.NoError(t, err)
		defer ws.Close()
		short := filepath.Join(root, "config/loop/loop/loop/loop/loop/loop/loop/loop")
		long := filepath.Join(short, "loop/loop")
		assert.Equal(t, ws.BelowKey(short, false), ws.BelowKey(long, false), "config/** reached, nothing else begun")
		// An anchored pattern keeps names apart while it can match.
		ws2, err := jail.New(root, jail.WithDeny("config/loop/loop/secret.txt"))
		require.NoError(t, err)
		defer ws2.Close()
		assert.NotEqual(t, ws2.BelowKey(filepath.Join(root, "config/loop"), false), ws2.BelowKey(filepath.Join(root, "config/loop/loop"), false))
		assert.Equal(t, ws2.BelowKey(filepath.Join(root, "config/loop/loop/loop"), false), ws2.BelowKey(filepath.Join(root, "config/loop/loop/loop/loop"), false),
			"past the pattern: nothing begun")
	})
}
