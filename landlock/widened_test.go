package landlock

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	golandlock "github.com/landlock-lsm/go-landlock/landlock"
	"github.com/stretchr/testify/require"
)

// TestWidenedCarvesMatchesScan: widenedCarves (rules indexed by path,
// each carve looking up its own path and its parents) reports exactly
// what the scan of every rule for every carve it replaced reported, in
// the same order, on random rules and carves that nest, repeat and sit
// at "/". Shown red by leaving out the carve's own path from the lookup.
func TestWidenedCarvesMatchesScan(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	comps := []string{"a", "b", "c"}
	randPath := func() string {
		n := rng.IntN(4)
		parts := make([]string, n)
		for i := range parts {
			parts[i] = comps[rng.IntN(len(comps))]
		}
		return "/" + strings.Join(parts, "/")
	}
	rights := []golandlock.AccessFSSet{0, RightsRead, RightsReadExec, RightsAll, chainRights}
	sources := []string{"workspace", "chain", SourceDenyPattern, SourceReadOnly, "extra"}
	for i := range 20_000 {
		var rules []Rule
		for range rng.IntN(6) {
			rules = append(rules, Rule{Path: randPath(), Access: rights[rng.IntN(len(rights))], Source: sources[rng.IntN(len(sources))]})
		}
		var carves []carve
		for range rng.IntN(6) {
			p := randPath()
			if p == "/" {
				p = "/a"
			}
			carves = append(carves, carve{path: p, access: rights[rng.IntN(len(rights))], source: sources[rng.IntN(len(sources))]})
		}
		require.Equal(t, widenedCarvesScan(rules, carves), widenedCarves(rules, carves), "case %d: %v %v", i, rules, carves)
	}
}

// widenedCarvesScan is widenedCarves before BenchmarkPlanMasks: every
// rule for every carve.
func widenedCarvesScan(rules []Rule, carves []carve) []string {
	var out []string
	for _, cv := range carves {
		for _, r := range rules {
			if r.Path != cv.path && !within(cv.path, r.Path) {
				continue
			}
			if extra := r.Access &^ cv.access &^ chainRights; extra != 0 && r.Source != cv.source {
				out = append(out, fmt.Sprintf("carve-out %s (%s) is widened by rule %s: children get %v there", cv.path, cv.source, r, extra))
			}
		}
	}
	return out
}
