package com.example;

import org.springframework.boot.SpringApplication;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.boot.web.servlet.ServletComponentScan;
import org.springframework.scheduling.annotation.EnableScheduling;

/**
 * The main class of a Nacos 0.8.0 server (what its console module's {@code com.alibaba.nacos.Nacos} does):
 * Spring Boot scanning Nacos's naming and core modules. Run with {@code -Dnacos.standalone=true} and
 * {@code --server.port=N --server.servlet.context-path=/nacos} plus the cmdb properties the console's
 * application.properties sets (NacosServer in the gateway's tests passes them).
 */
@SpringBootApplication(scanBasePackages = "com.alibaba.nacos")
@ServletComponentScan(basePackages = "com.alibaba.nacos")
@EnableScheduling
public class NacosPeer {
    public static void main(String[] args) {
        SpringApplication.run(NacosPeer.class, args);
    }
}
