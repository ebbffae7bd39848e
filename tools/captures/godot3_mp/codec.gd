extends SceneTree
# The engine's own codecs for the driver's check of godot3-enet-compressed: NetworkedMultiplayerENet's
# compressor calls Compression::compress/decompress (FastLZ, deflate, zstd), which GDScript reaches as
# PoolByteArray.compress/decompress.  Reads res://codec_jobs.bin, all integers u32 little-endian:
#   count, then per job: size + the NetworkedMultiplayerENet.CompressionMode name, op, output limit, size + bytes
#   op 0: a compressed datagram body: decompress it with the limit ENet gives (4096 - header size),
#         then compress the result again (the compressor is deterministic: it must give the body back)
#   op 1: an uncompressed datagram body: compress it (ENet keeps the compressed form only when shorter)
# and prints one line per job on stderr (report.gd's format):
#   CODEC <i> <op> <decompressed hex, or -> <recompressed == body 0|1, or the compressed size>

const R = preload("res://report.gd")
# NetworkedMultiplayerENet::enet_compress/enet_decompress: the ENet mode -> Compression::Mode
const MODES = {
	"COMPRESS_FASTLZ": File.COMPRESSION_FASTLZ,
	"COMPRESS_ZLIB": File.COMPRESSION_DEFLATE,
	"COMPRESS_ZSTD": File.COMPRESSION_ZSTD,
}


func _init():
	var f = File.new()
	if f.open("res://codec_jobs.bin", File.READ) != OK:
		R.out("FATAL\tno codec_jobs.bin")
		quit()
		return
	var count = f.get_32()
	for i in range(count):
		var mode = MODES[f.get_buffer(f.get_32()).get_string_from_utf8()]
		var op = f.get_32()
		var limit = f.get_32()
		var body = f.get_buffer(f.get_32())
		if op == 0:
			var plain = body.decompress(limit, mode)
			var again = plain.compress(mode) if plain.size() > 0 else PoolByteArray()
			R.out("CODEC\t%d\t0\t%s\t%d" % [i, plain.hex_encode() if plain.size() > 0 else "-", int(again == body)])
		else:
			R.out("CODEC\t%d\t1\t-\t%d" % [i, body.compress(mode).size()])
	f.close()
	R.out("DONE")
	quit()
