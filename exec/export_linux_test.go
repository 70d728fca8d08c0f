package exec

// SpawnForTest runs start on c's spawner thread (pooled or fresh, as
// Start would), so a test can keep that thread alive while a child runs.
func SpawnForTest(c *Cmd, start func() error) error { return c.spawn(start) }

// UndumpableForTest is undumpable, which Start calls first.
var UndumpableForTest = undumpable
