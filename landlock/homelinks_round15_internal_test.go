package landlock

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/landjail/landjail/jail"
)

// TestHomeLinksRound15: HOME's link scan (red team round 15).
//   - R15a-1: the command's own entries in a hidden workspace
//     (~/.dotfiles) used up the scan's budget, and the scan stopped
//     silently, so ~/.kube/config -> ../.dotfiles/kube/config was not
//     seen. Writable roots are not read now (the padding costs nothing),
//     and a budget HOME's own trees exhaust fails closed
//     (ErrHomeScanLimit); control: the same trees one entry smaller
//     pass, and plain files do not count (R16-3: planted empty files
//     made every later run fail).
//   - R15a-3: file links in a $XDG_CONFIG_HOME that is not hidden in HOME
//     (~/cfg/gh/hosts.yml -> ../../dotfiles/gh/hosts.yml); control: the
//     same tree without XDG_CONFIG_HOME set is not denied.
//   - R15a-6: a HOME link whose target is a root (~/.kube -> ~/kubecfg,
//     the workspace): kubecfg/config is denied, kubecfg/other is not.
//   - R15a-15: below ~/.config -> dotfiles/config, a denied name that is
//     itself a link (config/gh/hosts.yml -> ../../secrets/gh-hosts.yml):
//     the link's target is denied, not the link (the namespace view
//     cannot mask a link: ELOOP); control: no ~/.config link.
//   - R15a-10: a directory of HOME that is a link out of the policy
//     (~/.config -> /elsewhere/config) holding a file link into the
//     workspace (gh/hosts.yml -> dotfiles/gh/hosts.yml); control: the
//     same tree with no ~/.config link.
//   - R15a-12: a root below a denied link's target (secrets ->
//     ../vault/app, --deny secrets/, --ro vault/app/sub) is denied whole;
//     control: without the deny pattern it keeps its rule.
//   - R15a-18: a denied name that is a link in a directory above the
//     workspace (app/.env -> settings/production, workspace app/settings):
//     its target is denied; control: no link.
//
// Red before the fix: every row but the controls read the secret.
func TestHomeLinksRound15(t *testing.T) {
	deny := func(t *testing.T, root string) ([]string, error) {
		t.Helper()
		ws, err := jail.New(root, jail.WithDenySecrets())
		require.NoError(t, err)
		defer ws.Close()
		denied, _, err := DeniedPaths(ws, 0)
		return denied, err
	}
	write := func(t *testing.T, p, c string) {
		t.Helper()
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
		require.NoError(t, os.WriteFile(p, []byte(c), 0o644))
	}
	newHome := func(t *testing.T) string {
		home, err := filepath.EvalSymlinks(t.TempDir())
		require.NoError(t, err)
		t.Setenv("HOME", home)
		t.Setenv("XDG_CONFIG_HOME", "")
		return home
	}
	setBudget := func(t *testing.T, n int) {
		old := maxHomeLinkScan
		maxHomeLinkScan = n
		t.Cleanup(func() { maxHomeLinkScan = old })
	}

	t.Run("R15a-1 padding in the workspace", func(t *testing.T) {
		home := newHome(t)
		setBudget(t, 500)
		d := filepath.Join(home, ".dotfiles")
		write(t, filepath.Join(d, "kube/config"), "KUBESECRET")
		// HOME: .dotfiles .kube (2 counted: 498 left); .dotfiles: kube
		// pad (496); pad: 496 directories (0): the old scan then skipped
		// ~/.kube without a word.
		for i := 0; i < 496; i++ {
			require.NoError(t, os.MkdirAll(filepath.Join(d, "pad", fmt.Sprint(i)), 0o755))
		}
		require.NoError(t, os.Mkdir(filepath.Join(home, ".kube"), 0o700))
		require.NoError(t, os.Symlink("../.dotfiles/kube/config", filepath.Join(home, ".kube/config")))
		denied, err := deny(t, d)
		require.NoError(t, err)
		assert.Contains(t, denied, filepath.Join(d, "kube/config"))
	})

	t.Run("R15a-1 HOME's own trees beyond the budget", func(t *testing.T) {
		for _, tc := range []struct {
			n     int
			files bool
		}{{400, false}, {600, false}, {600, true}} {
			home := newHome(t)
			setBudget(t, 500)
			d := filepath.Join(home, "dotfiles")
			write(t, filepath.Join(d, "x"), "")
			for i := 0; i < tc.n; i++ {
				if tc.files {
					write(t, filepath.Join(home, ".data", fmt.Sprint(i)), "")
				} else {
					require.NoError(t, os.MkdirAll(filepath.Join(home, ".data", fmt.Sprint(i)), 0o755))
				}
			}
			_, err := deny(t, d)
			if tc.n < 500 || tc.files {
				assert.NoError(t, err, "control: within the budget, or plain files (%d, files %v)", tc.n, tc.files)
			} else {
				assert.ErrorIs(t, err, ErrHomeScanLimit)
				assert.NotErrorIs(t, err, ErrWalkLimit, "--walk-limit does not raise it")
				assert.ErrorContains(t, err, filepath.Join(home, ".data"))
			}
		}
	})

	t.Run("R15a-3 XDG_CONFIG_HOME not hidden", func(t *testing.T) {
		for _, xdg := range []bool{false, true} {
			home := newHome(t)
			d := filepath.Join(home, "dotfiles")
			write(t, filepath.Join(d, "gh/hosts.yml"), "GHSECRET")
			require.NoError(t, os.MkdirAll(filepath.Join(home, "cfg/gh"), 0o755))
			require.NoError(t, os.Symlink("../../dotfiles/gh/hosts.yml", filepath.Join(home, "cfg/gh/hosts.yml")))
			if xdg {
				t.Setenv("XDG_CONFIG_HOME", filepath.Join(home, "cfg"))
			}
			denied, err := deny(t, d)
			require.NoError(t, err)
			if xdg {
				assert.Contains(t, denied, filepath.Join(d, "gh/hosts.yml"))
			} else {
				assert.NotContains(t, denied, filepath.Join(d, "gh/hosts.yml"), "control: ~/cfg is no configuration directory")
			}
		}
	})

	t.Run("R15a-6 a HOME link to the workspace", func(t *testing.T) {
		home := newHome(t)
		d := filepath.Join(home, "kubecfg")
		write(t, filepath.Join(d, "config"), "KUBESECRET")
		write(t, filepath.Join(d, "other"), "")
		require.NoError(t, os.Symlink("kubecfg", filepath.Join(home, ".kube")))
		denied, err := deny(t, d)
		require.NoError(t, err)
		assert.Contains(t, denied, filepath.Join(d, "config"))
		assert.NotContains(t, denied, filepath.Join(d, "other"))
		assert.NotContains(t, denied, d, "the root stays (README: R10-7)")
	})

	t.Run("R15a-15 a denied name below a folded link is a link", func(t *testing.T) {
		for _, linked := range []bool{false, true} {
			home := newHome(t)
			d := filepath.Join(home, "dotfiles")
			write(t, filepath.Join(d, "secrets/gh-hosts.yml"), "GHSECRET")
			require.NoError(t, os.MkdirAll(filepath.Join(d, "config/gh"), 0o755))
			require.NoError(t, os.Symlink("../../secrets/gh-hosts.yml", filepath.Join(d, "config/gh/hosts.yml")))
			if linked {
				require.NoError(t, os.Symlink("dotfiles/config", filepath.Join(home, ".config")))
			}
			denied, err := deny(t, d)
			require.NoError(t, err)
			if linked {
				assert.Contains(t, denied, filepath.Join(d, "secrets/gh-hosts.yml"))
			} else {
				assert.NotContains(t, denied, filepath.Join(d, "secrets/gh-hosts.yml"), "control: no link names it")
			}
			assert.NotContains(t, denied, filepath.Join(d, "config/gh/hosts.yml"), "a link is never carved itself")
		}
	})

	t.Run("R15a-10 a HOME directory linked out of the policy", func(t *testing.T) {
		for _, linked := range []bool{false, true} {
			home := newHome(t)
			elsewhere, err := filepath.EvalSymlinks(t.TempDir())
			require.NoError(t, err)
			d := filepath.Join(home, "dotfiles")
			write(t, filepath.Join(d, "gh/hosts.yml"), "GHSECRET")
			require.NoError(t, os.MkdirAll(filepath.Join(elsewhere, "config/gh"), 0o755))
			require.NoError(t, os.Symlink(filepath.Join(d, "gh/hosts.yml"), filepath.Join(elsewhere, "config/gh/hosts.yml")))
			if linked {
				require.NoError(t, os.Symlink(filepath.Join(elsewhere, "config"), filepath.Join(home, ".config")))
			}
			denied, err := deny(t, d)
			require.NoError(t, err)
			if linked {
				assert.Contains(t, denied, filepath.Join(d, "gh/hosts.yml"))
			} else {
				assert.NotContains(t, denied, filepath.Join(d, "gh/hosts.yml"), "control: no HOME name leads there")
			}
		}
	})

	t.Run("R15a-12 a root below a denied link's target", func(t *testing.T) {
		for _, denyIt := range []bool{false, true} {
			newHome(t)
			base, err := filepath.EvalSymlinks(t.TempDir())
			require.NoError(t, err)
			w, sub := filepath.Join(base, "w"), filepath.Join(base, "vault/app/sub")
			write(t, filepath.Join(sub, "k.txt"), "SUBSECRET")
			require.NoError(t, os.MkdirAll(w, 0o755))
			require.NoError(t, os.Symlink("../vault/app", filepath.Join(w, "secrets")))
			opts := []jail.Option{jail.WithAllowed(sub, jail.ReadOnly)}
			if denyIt {
				opts = append(opts, jail.WithDeny("secrets/"))
			}
			ws, err := jail.New(w, opts...)
			require.NoError(t, err)
			roots := []Rule{{Path: w, Access: RightsAll}, {Path: sub, Access: RightsReadExec}}
			carves, err := collectCarves(ws, Options{}, roots)
			ws.Close()
			require.NoError(t, err)
			var got []string
			for _, c := range carves {
				if deniedSource(c.source) {
					got = append(got, c.path)
				}
			}
			if denyIt {
				assert.Contains(t, got, sub)
			} else {
				assert.NotContains(t, got, sub, "control: no pattern")
			}
		}
	})

	t.Run("R15a-18 a denied link above the workspace", func(t *testing.T) {
		for _, linked := range []bool{false, true} {
			newHome(t)
			base, err := filepath.EvalSymlinks(t.TempDir())
			require.NoError(t, err)
			w := filepath.Join(base, "app/settings")
			write(t, filepath.Join(w, "production"), "DB_PASSWORD=UPSECRET")
			write(t, filepath.Join(w, "readme"), "")
			if linked {
				require.NoError(t, os.Symlink("settings/production", filepath.Join(base, "app/.env")))
			}
			denied, err := deny(t, w)
			require.NoError(t, err)
			if linked {
				assert.Contains(t, denied, filepath.Join(w, "production"))
			} else {
				assert.NotContains(t, denied, filepath.Join(w, "production"), "control: no link names it")
			}
			assert.NotContains(t, denied, filepath.Join(w, "readme"))
		}
	})

	t.Run("R16-6 a root below a HOME link's target", func(t *testing.T) {
		// ~/.config -> dotfiles/config, the workspace dotfiles/config/gh:
		// hosts.yml is denied by its name through the link (red team
		// round 16, R16-6). Control: no ~/.config link.
		for _, linked := range []bool{false, true} {
			home := newHome(t)
			d := filepath.Join(home, "dotfiles/config/gh")
			write(t, filepath.Join(d, "hosts.yml"), "GHSECRET")
			write(t, filepath.Join(d, "other.yml"), "")
			if linked {
				require.NoError(t, os.Symlink("dotfiles/config", filepath.Join(home, ".config")))
			}
			denied, err := deny(t, d)
			require.NoError(t, err)
			if linked {
				assert.Contains(t, denied, filepath.Join(d, "hosts.yml"))
			} else {
				assert.NotContains(t, denied, filepath.Join(d, "hosts.yml"), "control: no link names it")
			}
			assert.NotContains(t, denied, filepath.Join(d, "other.yml"))
		}
	})
	t.Run("R18a-18 a directory link inside a HOME link's target", func(t *testing.T) {
		// ~/.config -> dotfiles/config, dotfiles/config/gh ->
		// ../private/gh, the workspace dotfiles: private/gh/hosts.yml is
		// denied by its name through both links (red team round 18,
		// R18a-18). Control: no ~/.config link.
		for _, linked := range []bool{false, true} {
			home := newHome(t)
			d := filepath.Join(home, "dotfiles")
			write(t, filepath.Join(d, "private/gh/hosts.yml"), "GHSECRET")
			write(t, filepath.Join(d, "private/gh/other.yml"), "")
			require.NoError(t, os.MkdirAll(filepath.Join(d, "config"), 0o755))
			require.NoError(t, os.Symlink("../private/gh", filepath.Join(d, "config/gh")))
			if linked {
				require.NoError(t, os.Symlink("dotfiles/config", filepath.Join(home, ".config")))
			}
			denied, err := deny(t, d)
			require.NoError(t, err)
			if linked {
				assert.Contains(t, denied, filepath.Join(d, "private/gh/hosts.yml"))
			} else {
				assert.NotContains(t, denied, filepath.Join(d, "private/gh/hosts.yml"), "control: no link names it")
			}
			assert.NotContains(t, denied, filepath.Join(d, "private/gh/other.yml"))
		}
	})
	t.Run("R19-1 a decoy beside the user's inner link", func(t *testing.T) {
		// ~/.config -> dotfiles/config, the user's dotfiles/config/gh ->
		// ../private/gh, and a decoy the command planted,
		// dotfiles/config/aa -> ../private/gh, met first: the decoy's
		// walk (as ~/.config/aa, nothing denied) spared the user's name
		// (red team round 19, R19-1). Each decoy name readdir may give
		// first or last. Control: no ~/.config link.
		for _, decoy := range []string{"aa", ".x", "zz"} {
			for _, linked := range []bool{false, true} {
				home := newHome(t)
				d := filepath.Join(home, "dotfiles")
				write(t, filepath.Join(d, "private/gh/hosts.yml"), "GHSECRET")
				write(t, filepath.Join(d, "private/gh/other.yml"), "")
				require.NoError(t, os.MkdirAll(filepath.Join(d, "config"), 0o755))
				require.NoError(t, os.Symlink("../private/gh", filepath.Join(d, "config/gh")))
				require.NoError(t, os.Symlink("../private/gh", filepath.Join(d, "config", decoy)))
				if linked {
					require.NoError(t, os.Symlink("dotfiles/config", filepath.Join(home, ".config")))
				}
				denied, err := deny(t, d)
				require.NoError(t, err)
				if linked {
					assert.Contains(t, denied, filepath.Join(d, "private/gh/hosts.yml"), decoy)
				} else {
					assert.NotContains(t, denied, filepath.Join(d, "private/gh/hosts.yml"), "control: no link names it")
				}
				assert.NotContains(t, denied, filepath.Join(d, "private/gh/other.yml"))
			}
		}
	})
	t.Run("R19-1 a decoy in another HOME link's target", func(t *testing.T) {
		// GNU stow's layout: ~/.config/aaa -> ../dotfiles/aaa and
		// ~/.config/gh -> ../dotfiles/gh, and the command's
		// dotfiles/aaa/x -> ../gh: the walk of ~/.config/aaa/x spared
		// ~/.config/gh (red team round 19, R19-1). Control: no
		// ~/.config/gh link.
		for _, linked := range []bool{false, true} {
			home := newHome(t)
			d := filepath.Join(home, "dotfiles")
			write(t, filepath.Join(d, "gh/hosts.yml"), "GHSECRET")
			write(t, filepath.Join(d, "gh/other.yml"), "")
			write(t, filepath.Join(d, "aaa/settings"), "")
			require.NoError(t, os.Symlink("../gh", filepath.Join(d, "aaa/x")))
			require.NoError(t, os.MkdirAll(filepath.Join(home, ".config"), 0o755))
			require.NoError(t, os.Symlink("../dotfiles/aaa", filepath.Join(home, ".config/aaa")))
			if linked {
				require.NoError(t, os.Symlink("../dotfiles/gh", filepath.Join(home, ".config/gh")))
			}
			denied, err := deny(t, d)
			require.NoError(t, err)
			if linked {
				assert.Contains(t, denied, filepath.Join(d, "gh/hosts.yml"))
			} else {
				assert.NotContains(t, denied, filepath.Join(d, "gh/hosts.yml"), "control: no link names it")
			}
			assert.NotContains(t, denied, filepath.Join(d, "gh/other.yml"))
		}
	})
	t.Run("R19-9 a HOME file link below a wildcard level", func(t *testing.T) {
		// ~/.mozilla/firefox/abc.default/logins.json ->
		// ../../../dotfiles/ff/logins.json, the workspace dotfiles: denied
		// by its name through the link (red team round 19, R19-9).
		// Control: no link.
		for _, linked := range []bool{false, true} {
			home := newHome(t)
			d := filepath.Join(home, "dotfiles")
			write(t, filepath.Join(d, "ff/logins.json"), "FF")
			write(t, filepath.Join(d, "ff/prefs.js"), "")
			require.NoError(t, os.MkdirAll(filepath.Join(home, ".mozilla/firefox/abc.default"), 0o755))
			if linked {
				require.NoError(t, os.Symlink("../../../dotfiles/ff/logins.json", filepath.Join(home, ".mozilla/firefox/abc.default/logins.json")))
			}
			denied, err := deny(t, d)
			require.NoError(t, err)
			if linked {
				assert.Contains(t, denied, filepath.Join(d, "ff/logins.json"))
			} else {
				assert.NotContains(t, denied, filepath.Join(d, "ff/logins.json"), "control: no link names it")
			}
			assert.NotContains(t, denied, filepath.Join(d, "ff/prefs.js"))
		}
	})
	t.Run("R19-5 a HOME link directly in ~/.local/share", func(t *testing.T) {
		// ~/.local/share/keyrings -> ../../dotfiles/keyrings, the
		// workspace dotfiles: keyrings/login.keyring is denied by its
		// name through the link (red team round 19, R19-5: ~/.local/share
		// was never read). Control: no link.
		for _, linked := range []bool{false, true} {
			home := newHome(t)
			t.Setenv("XDG_DATA_HOME", "")
			d := filepath.Join(home, "dotfiles")
			write(t, filepath.Join(d, "keyrings/login.keyring"), "KEYRING")
			write(t, filepath.Join(d, "other/x"), "")
			require.NoError(t, os.MkdirAll(filepath.Join(home, ".local/share"), 0o755))
			if linked {
				require.NoError(t, os.Symlink("../../dotfiles/keyrings", filepath.Join(home, ".local/share/keyrings")))
			}
			denied, err := deny(t, d)
			require.NoError(t, err)
			if linked {
				assert.Contains(t, denied, filepath.Join(d, "keyrings"), "the directory .local/share/keyrings/ names")
			} else {
				assert.NotContains(t, denied, filepath.Join(d, "keyrings"), "control: no link names it")
			}
			assert.NotContains(t, denied, filepath.Join(d, "other/x"))
		}
	})
	t.Run("R19-5 a HOME link directly in ~/.cache", func(t *testing.T) {
		// ~/.cache/huggingface -> the workspace's hf (a model cache
		// moved to a data disk): hf/token is denied by its name through
		// the link, **/.cache/huggingface/token (red team round 19,
		// R19-5's third shape: ~/.cache was never read). Control: no
		// link; and ~/.cache's other directories are not entered (a link
		// two levels down, under no pattern's name, is not found).
		for _, linked := range []bool{false, true} {
			home := newHome(t)
			t.Setenv("XDG_CACHE_HOME", "")
			t.Setenv("HF_HOME", "")
			d := filepath.Join(home, "data")
			write(t, filepath.Join(d, "hf/token"), "hf_SECRET")
			write(t, filepath.Join(d, "hf/hub/x"), "")
			require.NoError(t, os.MkdirAll(filepath.Join(home, ".cache/pip/http"), 0o755))
			require.NoError(t, os.Symlink("../../../data/hf/hub", filepath.Join(home, ".cache/pip/http/lnk")))
			if linked {
				require.NoError(t, os.Symlink("../data/hf", filepath.Join(home, ".cache/huggingface")))
			}
			ws, err := jail.New(d, jail.WithDenySecrets())
			require.NoError(t, err)
			defer ws.Close()
			links, err := HomeLinks(ws)
			require.NoError(t, err)
			denied, _, err := DeniedPaths(ws, 0)
			require.NoError(t, err)
			if linked {
				assert.Contains(t, denied, filepath.Join(d, "hf/token"))
				assert.Contains(t, links, filepath.Join(home, ".cache/huggingface"))
			} else {
				assert.NotContains(t, denied, filepath.Join(d, "hf/token"), "control: no link names it")
			}
			assert.NotContains(t, denied, filepath.Join(d, "hf/hub/x"))
			assert.NotContains(t, links, filepath.Join(home, ".cache/pip/http/lnk"), "below ~/.cache only where a pattern leads")
		}
	})
	t.Run("R20a-2 a file link in a moved XDG_DATA_HOME or XDG_STATE_HOME", func(t *testing.T) {
		// XDG_DATA_HOME=/elsewhere/xdg with keyrings/login.keyring ->
		// the dotfiles workspace's file (stow without folding), and the
		// same for XDG_STATE_HOME's nvim/swap: the targets are denied by
		// the names the links give them (red team round 20, R20a-2: the
		// moved directories were never read). Control: the variables
		// unset (the links are then in no directory HOME's scan reads).
		for _, set := range []bool{false, true} {
			home := newHome(t)
			d := filepath.Join(home, "dotfiles")
			x := filepath.Join(filepath.Dir(home), filepath.Base(home)+"-xdg")
			t.Cleanup(func() { os.RemoveAll(x) })
			files := map[string]string{"XDG_DATA_HOME": "keyrings/login.keyring", "XDG_STATE_HOME": "nvim/swap/x.swp"}
			for env, f := range files {
				write(t, filepath.Join(d, env, f), "SECRET")
				require.NoError(t, os.MkdirAll(filepath.Join(x, env, filepath.Dir(f)), 0o755))
				require.NoError(t, os.Symlink(filepath.Join(d, env, f), filepath.Join(x, env, f)))
				if set {
					t.Setenv(env, filepath.Join(x, env))
				} else {
					t.Setenv(env, "")
				}
			}
			write(t, filepath.Join(d, "other"), "")
			denied, err := deny(t, d)
			require.NoError(t, err)
			for env, f := range files {
				if set {
					assert.Contains(t, denied, filepath.Join(d, env, f))
				} else {
					assert.NotContains(t, denied, filepath.Join(d, env, f), "control: %s unset", env)
				}
			}
			assert.NotContains(t, denied, filepath.Join(d, "other"))
		}
	})
	t.Run("R20a-6 a leading directory link above the workspace", func(t *testing.T) {
		// proj/.kube -> app/k8s with the workspace proj/app: k8s/config
		// is denied by its name through the link, as the same link in
		// HOME is (red team round 20, R20a-6). Control: no link.
		for _, linked := range []bool{false, true} {
			home := newHome(t)
			proj := filepath.Join(home, "proj")
			d := filepath.Join(proj, "app")
			write(t, filepath.Join(d, "k8s/config"), "KUBE")
			write(t, filepath.Join(d, "k8s/other"), "")
			if linked {
				require.NoError(t, os.Symlink("app/k8s", filepath.Join(proj, ".kube")))
			}
			denied, err := deny(t, d)
			require.NoError(t, err)
			if linked {
				assert.Contains(t, denied, filepath.Join(d, "k8s/config"))
			} else {
				assert.NotContains(t, denied, filepath.Join(d, "k8s/config"), "control: no link names it")
			}
			assert.NotContains(t, denied, filepath.Join(d, "k8s/other"))
		}
	})
	t.Run("R18a-10 a HOME link at a wildcard level of a pattern", func(t *testing.T) {
		// ~/.mozilla/firefox/abc.default -> sync/profile, the workspace
		// sync: profile/logins.json is denied by its name through the
		// link (**/.mozilla/firefox/*/logins.json; red team round 18,
		// R18a-10). Control: no link.
		for _, linked := range []bool{false, true} {
			home := newHome(t)
			d := filepath.Join(home, "sync")
			write(t, filepath.Join(d, "profile/logins.json"), "FFSECRET")
			write(t, filepath.Join(d, "profile/prefs.js"), "")
			if linked {
				require.NoError(t, os.MkdirAll(filepath.Join(home, ".mozilla/firefox"), 0o755))
				require.NoError(t, os.Symlink("../../sync/profile", filepath.Join(home, ".mozilla/firefox/abc.default")))
			}
			denied, err := deny(t, d)
			require.NoError(t, err)
			if linked {
				assert.Contains(t, denied, filepath.Join(d, "profile/logins.json"))
			} else {
				assert.NotContains(t, denied, filepath.Join(d, "profile/logins.json"), "control: no link names it")
			}
			assert.NotContains(t, denied, filepath.Join(d, "profile/prefs.js"))
		}
	})

	// Red team round 22: a directory out of the policy, reached by a name
	// a pattern leads or denies, holding a link back into the workspace
	// (each red before: the secret was granted). Controls: the same link
	// under a name no pattern matches.
	t.Run("R22a-2 two directory links out of the policy", func(t *testing.T) {
		for _, name := range []string{"notes.yml", "hosts.yml"} {
			home := newHome(t)
			d := filepath.Join(home, "dotfiles")
			write(t, filepath.Join(d, "private/gh-hosts.yml"), "GHSECRET")
			require.NoError(t, os.MkdirAll(filepath.Join(home, "sync/config"), 0o755))
			require.NoError(t, os.MkdirAll(filepath.Join(home, "sync2/gh"), 0o755))
			require.NoError(t, os.Symlink("sync/config", filepath.Join(home, ".config")))
			require.NoError(t, os.Symlink("../../sync2/gh", filepath.Join(home, "sync/config/gh")))
			require.NoError(t, os.Symlink("../../dotfiles/private/gh-hosts.yml", filepath.Join(home, "sync2/gh", name)))
			denied, err := deny(t, d)
			require.NoError(t, err)
			if name == "hosts.yml" {
				assert.Contains(t, denied, filepath.Join(d, "private/gh-hosts.yml"))
			} else {
				assert.NotContains(t, denied, filepath.Join(d, "private/gh-hosts.yml"), "control: gh/notes.yml is no secret's name")
			}
		}
	})

	t.Run("R22a-3 a HOME directory link at the third level out of the policy", func(t *testing.T) {
		for _, name := range []string{"notes.txt", "login.keyring"} {
			home := newHome(t)
			d := filepath.Join(home, "dotfiles")
			write(t, filepath.Join(d, "private/kr"), "KEYRING")
			write(t, filepath.Join(d, "private/logins"), "LOGINS")
			require.NoError(t, os.MkdirAll(filepath.Join(home, ".local/share"), 0o755))
			require.NoError(t, os.MkdirAll(filepath.Join(home, ".mozilla/firefox"), 0o755))
			require.NoError(t, os.MkdirAll(filepath.Join(home, "sync/kr"), 0o755))
			require.NoError(t, os.MkdirAll(filepath.Join(home, "sync/profile"), 0o755))
			require.NoError(t, os.Symlink("../../sync/kr", filepath.Join(home, ".local/share/keyrings")))
			require.NoError(t, os.Symlink("../../sync/profile", filepath.Join(home, ".mozilla/firefox/abc.default")))
			require.NoError(t, os.Symlink("../../dotfiles/private/kr", filepath.Join(home, "sync/kr", name)))
			logins := "logins.json"
			if name == "notes.txt" {
				logins = "notes.json"
			}
			require.NoError(t, os.Symlink("../../dotfiles/private/logins", filepath.Join(home, "sync/profile", logins)))
			denied, err := deny(t, d)
			require.NoError(t, err)
			if name == "login.keyring" {
				assert.Contains(t, denied, filepath.Join(d, "private/kr"), "below the denied .local/share/keyrings")
				assert.Contains(t, denied, filepath.Join(d, "private/logins"), "at a wildcard level of .mozilla/firefox/*/logins.json")
			} else {
				assert.Contains(t, denied, filepath.Join(d, "private/kr"), "everything below a denied keyrings/ is denied")
				assert.NotContains(t, denied, filepath.Join(d, "private/logins"), "control: notes.json is no secret's name")
			}
		}
	})

	t.Run("R22a-6 a relocated credential directory holding a link into the workspace", func(t *testing.T) {
		for _, name := range []string{"notes.txt", "pubring.kbx"} {
			home := newHome(t)
			d := filepath.Join(home, "dotfiles")
			write(t, filepath.Join(d, "private/sec.kbx"), "GPG")
			gpg := filepath.Join(filepath.Dir(home), "gpg")
			require.NoError(t, os.MkdirAll(gpg, 0o700))
			t.Cleanup(func() { os.RemoveAll(gpg) })
			t.Setenv("GNUPGHOME", gpg)
			require.NoError(t, os.Symlink(filepath.Join(d, "private/sec.kbx"), filepath.Join(gpg, name)))
			denied, err := deny(t, d)
			require.NoError(t, err)
			// Everything in GNUPGHOME is denied: the name does not matter;
			// the control is the same link with GNUPGHOME unset.
			assert.Contains(t, denied, filepath.Join(d, "private/sec.kbx"))
			t.Setenv("GNUPGHOME", "")
			denied, err = deny(t, d)
			require.NoError(t, err)
			assert.NotContains(t, denied, filepath.Join(d, "private/sec.kbx"), "control: no GNUPGHOME")
		}
	})

	t.Run("R22a-8 a Flatpak's credential file seven levels below HOME", func(t *testing.T) {
		for _, name := range []string{"notes.json", "logins.json"} {
			home := newHome(t)
			d := filepath.Join(home, "dotfiles")
			write(t, filepath.Join(d, "private/logins"), "LOGINS")
			p := filepath.Join(home, ".var/app/org.mozilla.firefox/.mozilla/firefox/x.default", name)
			require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
			require.NoError(t, os.Symlink(filepath.Join(d, "private/logins"), p))
			denied, err := deny(t, d)
			require.NoError(t, err)
			if name == "logins.json" {
				assert.Contains(t, denied, filepath.Join(d, "private/logins"))
			} else {
				assert.NotContains(t, denied, filepath.Join(d, "private/logins"), "control: notes.json is no secret's name")
			}
		}
	})
}
