import assert from "node:assert/strict";
import { RotatingFileSink } from "./rotating_file_sink.ts";

Deno.test("RotatingFileSink rotates past the size limit and keeps at most maxBackups", async () => {
  const dir = await Deno.makeTempDir();
  try {
    let t = Date.parse("2026-11-22T10:00:00Z");
    const sink = new RotatingFileSink(
      `${dir}/mesh.log`,
      { maxSizeMb: 1, maxAgeDays: 0, maxBackups: 2 },
      () => {
        t += 1000;
        return new Date(t);
      },
    );
    const line = "x".repeat(1023) + "\n"; // 1 KiB; 1024 lines fill one megabyte
    for (let i = 0; i < 1024 * 4; i++) sink.write(line);
    sink.write("last\n");
    sink.close();
    const names = [...Deno.readDirSync(dir)].map((e) => e.name).sort();
    assert.equal(names.length, 3, `expected the live file and 2 backups, got ${names.join(", ")}`);
    assert.ok(names.includes("mesh.log"));
    assert.ok(names.every((n) => n === "mesh.log" || /^mesh-2026-11-22T.*\.log$/.test(n)));
    assert.equal(await Deno.readTextFile(`${dir}/mesh.log`), "last\n");
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("RotatingFileSink removes backups older than maxAgeDays", async () => {
  const dir = await Deno.makeTempDir();
  try {
    await Deno.writeTextFile(`${dir}/mesh-2020-01-01T00-00-00.000.log`, "old\n");
    await Deno.utime(
      `${dir}/mesh-2020-01-01T00-00-00.000.log`,
      new Date("2020-01-01"),
      new Date("2020-01-01"),
    );
    const sink = new RotatingFileSink(`${dir}/mesh.log`, { maxSizeMb: 0, maxAgeDays: 30, maxBackups: 0 });
    sink.write("current\n");
    sink.rotate();
    sink.close();
    const names = [...Deno.readDirSync(dir)].map((e) => e.name);
    assert.ok(!names.includes("mesh-2020-01-01T00-00-00.000.log"), "the 2020 backup should be gone");
    assert.equal(names.length, 2);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
