package fedgsp

// Overrides are the client settings a caller gives on top of a preset
// (Preset, Choose): a nil field is unset and keeps the preset's value, so
// "given" and "left at the default" stay apart without asking a flag
// parser which flags were typed.
type Overrides struct {
	Orders, Hidden, Layers, Principal *int
	Tau, LR1, WD1, LR2, WD2           *float64
	DropoutC, DropoutM                *float64
	RawFeatures, NoBias               *bool
}

// Apply sets c's fields that o gives.
func (o Overrides) Apply(c *Config) {
	for _, f := range []struct {
		dst *int
		v   *int
	}{{&c.Orders, o.Orders}, {&c.Hidden, o.Hidden}, {&c.Layers, o.Layers}, {&c.Principal, o.Principal}} {
		if f.v != nil {
			*f.dst = *f.v
		}
	}
	for _, f := range []struct {
		dst *float64
		v   *float64
	}{{&c.Tau, o.Tau}, {&c.LR1, o.LR1}, {&c.WD1, o.WD1}, {&c.LR2, o.LR2}, {&c.WD2, o.WD2},
		{&c.DropoutC, o.DropoutC}, {&c.DropoutM, o.DropoutM}} {
		if f.v != nil {
			*f.dst = *f.v
		}
	}
	if o.RawFeatures != nil {
		c.RawFeatures = *o.RawFeatures
	}
	if o.NoBias != nil {
		c.NoBias = *o.NoBias
	}
}
