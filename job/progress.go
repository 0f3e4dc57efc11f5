package job

// Progress shows long work: Stage opens the bar of one stage of total
// steps. The library never draws; the caller's Progress does (a terminal
// bar in the command, nothing in tests).
type Progress interface {
	Stage(name string, total int) Bar
}

// Bar is one stage's progress.
type Bar interface {
	Update(done int, note string)
	Finish()
}

// quiet is the Progress of a spec that names none.
type quiet struct{}

func (quiet) Stage(string, int) Bar { return quiet{} }
func (quiet) Update(int, string)    {}
func (quiet) Finish()               {}

func progressOr(p Progress) Progress {
	if p == nil {
		return quiet{}
	}
	return p
}
