-- The server's clock: {seconds, microseconds}.
return redis.call('TIME')
