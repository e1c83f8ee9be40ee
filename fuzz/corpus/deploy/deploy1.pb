
AO5[Ü·Ì
÷(ï<Î¹a]hKµ²Ê_…š°ð·Xqª8[kŽ­€œ¦tTÙh?Ï+ 4VÖþ,J¾+ðûÛ²ñÁ3new out(`rho:io:stdout`) in { out!("seed deploy") }€Ð•ÿ¼1"F0D F“¨µúYÙ :NVÇo•	…	II)Z‡šaëÛÇš_ íÞáJ>æô	;µU¤Š2ü:Ò†«b·5 ”kýÄ*	secp256k18@ Zroot