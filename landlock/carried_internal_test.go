package landlock

import (
	"fmt"

	"github.com/landjail/landjail/jail"
)

// Every link walk in this package's tests checks that the narrowing it
// carries to a name (matched at the name's own level, with its read-only
// parent) is the name's whole match in the bits that decide the walk
// below it and its key (jail.Workspace.BelowKeyOf): denied and read-only
// for a walk by Narrowing, denied for a walk by NameNarrowing, which
// reads no read-only verdict below. A difference would let two names
// share a key and a walk while their verdicts below differ (red team
// round 21, R21-1's remedy). Red with walkTreeDir's read-only parent
// not added: TestWalkCarvesLinkLeadsReadOnly and the carveouts rows
// under a --read-only directory panic here.
func init() {
	carried = func(ws *jail.Workspace, virtual string, n jail.Narrowing, byName bool) {
		whole, mask := ws.Narrowing(virtual), jail.NarrowDenied|jail.NarrowReadOnly
		if byName {
			whole, mask = ws.NameNarrowing(virtual), jail.NarrowDenied
		}
		if whole&mask != n&mask {
			panic(fmt.Sprintf("link walk of %s carried narrowing %b, its whole match is %b", virtual, n, whole))
		}
	}
}
