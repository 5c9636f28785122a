// parse.mjs reads a JSON array on stdin — CoT XML documents, or
// {"proto": "<base64>"} for a TAK Protocol version 1 TakMessage — parses
// each with @tak-ps/node-cot (an independent CoT implementation, with its
// schema validation), and prints what it read as a JSON array: one object
// per document, or {"error": "..."} when the library rejected it. The Go
// tests (output/cot, cmd/cuasd) compare this with what cuasd encoded.
import { CoTParser } from '@tak-ps/node-cot';

const chunks = [];
for await (const c of process.stdin) chunks.push(c);
const docs = JSON.parse(Buffer.concat(chunks).toString('utf8'));

const out = [];
for (const xml of docs) {
    try {
        const cot = typeof xml === 'string'
            ? CoTParser.from_xml(xml)
            : await CoTParser.from_proto(Buffer.from(xml.proto, 'base64'), 1);
        const geo = await CoTParser.to_geojson(cot);
        const ev = cot.raw.event;
        const pt = ev.point._attributes;
        out.push({
            uid: cot.uid(),
            type: cot.type(),
            how: ev._attributes.how,
            time: ev._attributes.time,
            start: ev._attributes.start,
            stale: ev._attributes.stale,
            lat: Number(pt.lat), lon: Number(pt.lon), hae: Number(pt.hae),
            ce: Number(pt.ce), le: Number(pt.le),
            callsign: geo.properties.callsign,
            course: geo.properties.course,
            speed: geo.properties.speed,
            remarks: geo.properties.remarks,
            links: geo.properties.links,
            stroke: geo.properties.stroke,
            fill: geo.properties.fill,
            geometry: geo.geometry.type,
            vertices: geo.geometry.type === 'Polygon' ? geo.geometry.coordinates[0].length : 0,
            hostile: cot.is_hostile(), friend: cot.is_friend(), airborne: cot.is_airborne(), ground: cot.is_ground(),
        });
    } catch (err) {
        out.push({ error: String(err && err.message || err) });
    }
}
process.stdout.write(JSON.stringify(out));
