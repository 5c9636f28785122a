package board

import (
	"math"
	"slices"
)

// Geometry of the zone index: 0.5° cells; a zone whose widened box would
// cover more cells than maxZoneCells (a zone hundreds of kilometres
// across, or near a pole) is checked for every track instead.
const (
	indexCellDeg = 0.5
	indexCols    = int(360 / indexCellDeg)
	maxZoneCells = 4096
)

// zoneIndex is the spatial index of a sweep (issue 23): each 0.5° cell
// lists the zones whose widened box overlaps it, so a track is tested
// against the zones of its cell instead of every zone. It answers exactly
// what candidateZones answers.
type zoneIndex struct {
	boxes  []zoneBox
	cells  map[int32][]int32
	global []int32
	buf    []int
}

func newZoneIndex(boxes []zoneBox) *zoneIndex {
	x := &zoneIndex{boxes: boxes, cells: map[int32][]int32{}}
	for i := range boxes {
		x.insert(int32(i), &boxes[i])
	}
	return x
}

func cellRow(lat float64) int {
	return min(int(180/indexCellDeg)-1, max(0, int(math.Floor((lat+90)/indexCellDeg))))
}

func cellCol(lon float64) int {
	c := int(math.Floor((lon + 180) / indexCellDeg))
	return ((c % indexCols) + indexCols) % indexCols
}

// insert files zone i under every cell its box overlaps.
func (x *zoneIndex) insert(i int32, b *zoneBox) {
	r0, r1 := cellRow(math.Max(-90, b.s)), cellRow(math.Min(90, b.n))
	c0, n := 0, indexCols
	if b.e-b.w < 360 {
		c0 = int(math.Floor((b.w + 180) / indexCellDeg))
		n = min(indexCols, int(math.Floor((b.e+180)/indexCellDeg))-c0+1)
	}
	if (r1-r0+1)*n > maxZoneCells {
		x.global = append(x.global, i)
		return
	}
	for r := r0; r <= r1; r++ {
		for k := range n {
			c := ((c0+k)%indexCols + indexCols) % indexCols
			key := int32(r*indexCols + c)
			x.cells[key] = append(x.cells[key], i)
		}
	}
}

// candidates is candidateZones through the index. The returned slice is
// reused by the next call.
func (x *zoneIndex) candidates(lat, lon float64) []int {
	x.buf = x.buf[:0]
	for _, i := range x.cells[int32(cellRow(lat)*indexCols+cellCol(lon))] {
		if x.boxes[i].contains(lat, lon) {
			x.buf = append(x.buf, int(i))
		}
	}
	for _, i := range x.global {
		if x.boxes[i].contains(lat, lon) {
			x.buf = append(x.buf, int(i))
		}
	}
	if len(x.buf) == 0 && len(x.boxes) > 0 {
		return append(x.buf, nearestCentre(x.boxes, lat, lon))
	}
	slices.Sort(x.buf) // the order candidateZones gives: ties go to the first zone
	return x.buf
}
